"""Login tokens: a fresh refresh token is refused as "issued in the future" half of each second.

The access-token path stamps `iat` with int(time.time()); the refresh-token path,
added later, with round(time.time()). The verifier refuses any token whose `iat` is
after int(time.time()) and allows no leeway, so a refresh token issued in the second
half of a second is rejected until the next second starts.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import time

SIGNING_KEY = b"witness-gate-test-signing-key"
PBKDF2_ITERATIONS = 2_000  # lowered for the test environment; production uses 600_000
MIN_CHECK_SECONDS = 0.004  # every credential check takes this long, known user or not (no timing oracle)
ACCESS_TTL = 15 * 60
REFRESH_TTL = 30 * 24 * 3600


class AuthError(Exception):
    pass


class TokenError(Exception):
    pass


def _hash_password(password: str, salt: bytes) -> bytes:
    return hashlib.pbkdf2_hmac("sha256", password.encode(), salt, PBKDF2_ITERATIONS)


def _user(password: str) -> tuple[bytes, bytes]:
    salt = hashlib.sha256(password.encode()).digest()[:16]
    return salt, _hash_password(password, salt)


USERS = {"alice": _user("correct horse"), "bob": _user("battery staple")}


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _sign(claims: dict) -> str:
    body = _b64(json.dumps(claims, sort_keys=True).encode())
    signature = _b64(hmac.new(SIGNING_KEY, body.encode(), hashlib.sha256).digest())
    return f"{body}.{signature}"


def issue_access_token(user: str, scopes: list[str]) -> str:
    now = int(time.time())
    return _sign({"sub": user, "scope": " ".join(scopes), "iat": now, "exp": now + ACCESS_TTL, "jti": secrets.token_hex(8)})


def issue_refresh_token(user: str) -> str:
    now = round(time.time())  # bug: the access path truncates, this one rounds up half the time
    return _sign({"sub": user, "typ": "refresh", "iat": now, "exp": now + REFRESH_TTL, "jti": secrets.token_hex(8)})


def verify(token: str) -> dict:
    body, _, signature = token.partition(".")
    expected = _b64(hmac.new(SIGNING_KEY, body.encode(), hashlib.sha256).digest())
    if not hmac.compare_digest(signature, expected):
        raise TokenError("bad signature")
    claims = json.loads(_unb64(body))
    now = int(time.time())
    if claims["iat"] > now:
        raise TokenError("token used before it was issued")
    if claims["exp"] <= now:
        raise TokenError("token expired")
    return claims


def _check_credentials(user: str, password: str) -> bool:
    started = time.monotonic()
    salt, stored = USERS.get(user, (b"\0" * 16, b""))
    ok = hmac.compare_digest(_hash_password(password, salt), stored)
    remaining = MIN_CHECK_SECONDS - (time.monotonic() - started)
    if remaining > 0:
        time.sleep(remaining)
    return ok


def login(user: str, password: str, scopes: list[str], remember_me: bool) -> dict:
    if not _check_credentials(user, password):
        raise AuthError("invalid credentials")
    tokens = {"access_token": issue_access_token(user, scopes), "token_type": "Bearer", "expires_in": ACCESS_TTL}
    if remember_me:
        tokens["refresh_token"] = issue_refresh_token(user)
    return tokens
