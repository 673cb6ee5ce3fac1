#!/usr/bin/env python3
"""Calls the service over gRPC with stubs generated from the contract (see generate.sh).

GetAccessToken -> RefreshToken -> GetMessagesForConversation (with the refreshed access token), then prints one
JSON object. The client API key comes from the environment (AIAGENT_CLIENT_API_KEY), never the command line, and
neither it nor the refresh token is printed.

    ./generate.sh /tmp/stubs
    AIAGENT_CLIENT_API_KEY=cak_... python3 client.py --stubs /tmp/stubs --target localhost:8080 \
        --chatbot-id <uuid> --user-id customer-42 --conversation-id <uuid>
"""
import argparse
import json
import os
import sys


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--stubs", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "out"), help="directory written by generate.sh")
    p.add_argument("--target", default="localhost:8080", help="host:port of the service (cleartext HTTP/2)")
    p.add_argument("--chatbot-id", required=True)
    p.add_argument("--user-id", required=True)
    p.add_argument("--conversation-id", required=True)
    p.add_argument("--limit", type=int, default=20)
    args = p.parse_args()
    api_key = os.environ.get("AIAGENT_CLIENT_API_KEY")
    if not api_key:
        print("set AIAGENT_CLIENT_API_KEY", file=sys.stderr)
        return 2

    sys.path.insert(0, args.stubs)
    import grpc
    from aiagent.v1 import conversation_service_pb2 as conv
    from aiagent.v1 import conversation_service_pb2_grpc as conv_grpc
    from aiagent.v1 import token_service_pb2 as tok
    from aiagent.v1 import token_service_pb2_grpc as tok_grpc

    with grpc.insecure_channel(args.target) as channel:
        tokens = tok_grpc.TokenServiceStub(channel)
        conversations = conv_grpc.ConversationServiceStub(channel)
        try:
            issued = tokens.GetAccessToken(
                tok.GetAccessTokenRequest(user_id=args.user_id, chatbot_id=args.chatbot_id, client_api_key=api_key),
                timeout=10,
            ).data
            refreshed = tokens.RefreshToken(
                tok.RefreshTokenRequest(user_id=args.user_id, chatbot_id=args.chatbot_id, refresh_token=issued.refresh_token),
                timeout=10,
            ).data
            page = conversations.GetMessagesForConversation(
                conv.GetMessagesForConversationRequest(
                    conversation_id=args.conversation_id, limit=args.limit, access_token=refreshed.access_token
                ),
                timeout=10,
            )
        except grpc.RpcError as e:
            print(f"failed: {e.code().name} {e.details()}", file=sys.stderr)
            return 1

    print(
        json.dumps(
            {
                "access_token": issued.access_token,
                "access_token_expires_at": issued.access_token_expires_at,
                "refresh_token_expires_at": issued.refresh_token_expires_at,
                "refreshed": {"access_token": refreshed.access_token, "expires_at": refreshed.expires_at},
                "messages": [
                    {
                        "message_id": m.message_id,
                        "message_order": m.message_order,
                        "role": m.role,
                        "content": m.content,
                        "created_at": m.created_at,
                    }
                    for m in page.messages
                ],
                "has_more": page.has_more,
            },
            indent=2,
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
