"""Verify the aiagent service's webhook deliveries (Standard Webhooks), with the Python standard library only.

    from verify import verify_webhook, WebhookVerificationError
    event = verify_webhook(secret, request_headers, raw_body)   # raises WebhookVerificationError

The signature is HMAC-SHA256, keyed with the base64-decoded part of the `whsec_` secret, over
`{webhook-id}.{webhook-timestamp}.{raw body}`, sent as `v1,<base64>` in `webhook-signature` (space-separated when
there are several). Run this file to check a delivery saved as JSON ({"headers": {...}, "body": "..."}):

    python3 examples/webhooks/verify.py whsec_... delivery.json
"""

import base64
import hashlib
import hmac
import json
import sys
import time

TOLERANCE_SECONDS = 300


class WebhookVerificationError(Exception):
    """A delivery that does not verify: wrong or missing signature, stale timestamp, or a changed body."""


def sign(secret: str, msg_id: str, timestamp: int, body: str) -> str:
    """The `v1,<base64>` signature of a delivery."""
    key = base64.b64decode(secret[len("whsec_"):] if secret.startswith("whsec_") else secret)
    mac = hmac.new(key, f"{msg_id}.{timestamp}.{body}".encode("utf-8"), hashlib.sha256).digest()
    return "v1," + base64.b64encode(mac).decode("ascii")


def verify_webhook(secret: str, headers: dict, body, now: float | None = None, tolerance: int = TOLERANCE_SECONDS) -> dict:
    """Checks a delivery (headers in any case; body as received, bytes or str) and returns its event."""
    lower = {k.lower(): v for k, v in headers.items()}
    try:
        msg_id = lower["webhook-id"]
        timestamp = int(lower["webhook-timestamp"])
        signatures = lower["webhook-signature"]
    except (KeyError, ValueError) as e:
        raise WebhookVerificationError(f"missing or bad header: {e}") from None
    if abs((time.time() if now is None else now) - timestamp) > tolerance:
        raise WebhookVerificationError("webhook-timestamp is too far from now")
    text = body.decode("utf-8") if isinstance(body, bytes) else body
    expected = sign(secret, msg_id, timestamp, text)
    if not any(hmac.compare_digest(s, expected) for s in signatures.split(" ")):
        raise WebhookVerificationError("no valid signature")
    return json.loads(text)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: verify.py SECRET DELIVERY.json")
    with open(sys.argv[2], encoding="utf-8") as f:
        delivery = json.load(f)
    try:
        event = verify_webhook(sys.argv[1], delivery["headers"], delivery["body"])
    except WebhookVerificationError as e:
        print(f"invalid: {e}")
        sys.exit(1)
    print(f"valid: {event['type']} {event['event_id']}")
