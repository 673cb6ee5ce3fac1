"""A webhook receiver to try the service with: verifies each delivery and prints its event, one line each.

    python3 examples/webhooks/receiver.py --port 9000 --secret whsec_...

Answers 204 to a valid delivery and 400 to one that does not verify (the service then retries it). Deduplicate by
`webhook-id` (the event's id): a delivery can arrive more than once.
"""

import argparse
from http.server import BaseHTTPRequestHandler, HTTPServer

from verify import WebhookVerificationError, verify_webhook


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=9000)
    parser.add_argument("--secret", required=True)
    args = parser.parse_args()
    seen: set[str] = set()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("content-length", "0")))
            try:
                event = verify_webhook(args.secret, dict(self.headers.items()), body)
            except WebhookVerificationError as e:
                self.send_response(400)
                self.end_headers()
                print(f"refused: {e}", flush=True)
                return
            self.send_response(204)
            self.end_headers()
            if event["event_id"] not in seen:
                seen.add(event["event_id"])
                print(f"{event['cursor']} {event['type']} {event['data'].get('conversation_id', '')}", flush=True)

        def log_message(self, *_: object) -> None:
            pass

    HTTPServer(("127.0.0.1", args.port), Handler).serve_forever()


if __name__ == "__main__":
    main()
