"""Every token a successful login hands out must be accepted right away.

Catches `session_tokens` stamping refresh tokens with round(time.time()) while the
verifier compares with int(time.time()): a "remember me" login fails during the
second half of every wall-clock second.
"""

from hypothesis import strategies as st

import witness_gate
from session_tokens import login, verify

PASSWORDS = {"alice": "correct horse", "bob": "battery staple"}

logins = st.fixed_dictionaries(
    {
        "user": st.sampled_from(sorted(PASSWORDS)),
        "scopes": st.lists(st.sampled_from(["orders:read", "orders:write", "profile"]), max_size=3, unique=True),
        "remember_me": st.booleans(),
    }
)


@witness_gate.property(
    payloads=logins,
    examples=[{"user": "alice", "scopes": ["orders:read"], "remember_me": False}],
)
def prop_fresh_login_tokens_verify(request: dict) -> bool:
    tokens = login(request["user"], PASSWORDS[request["user"]], request["scopes"], request["remember_me"])
    claims = verify(tokens["access_token"])
    if claims["sub"] != request["user"] or claims["scope"] != " ".join(request["scopes"]):
        return False
    if request["remember_me"]:
        return verify(tokens["refresh_token"])["sub"] == request["user"]
    return "refresh_token" not in tokens
