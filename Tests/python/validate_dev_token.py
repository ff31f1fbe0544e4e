#!/usr/bin/env python3
"""Validates a bearer-proxy dev token the way a local API would: with PyJWT, an independent JWT library,
finding the keys through the issuer's OpenID Connect discovery document (OpenID Connect Discovery 1.0 §4).

usage: validate_dev_token.py DISCOVERY_URL AUDIENCE   (the token is read from stdin, never from argv)
Prints the verified claims as JSON; exits non-zero with a reason if validation fails.
"""
import json
import sys
import urllib.request

import jwt


def main() -> int:
    discovery_url, audience = sys.argv[1], sys.argv[2]
    token = sys.stdin.read().strip()
    with urllib.request.urlopen(discovery_url, timeout=10) as response:
        metadata = json.load(response)
    issuer = metadata["issuer"]
    if discovery_url != issuer + "/.well-known/openid-configuration":
        print(f"discovery document is not at {{issuer}}/.well-known/openid-configuration: {issuer}", file=sys.stderr)
        return 3
    signing_key = jwt.PyJWKClient(metadata["jwks_uri"]).get_signing_key_from_jwt(token)
    claims = jwt.decode(
        token,
        signing_key.key,
        algorithms=["ES256"],
        audience=audience,
        issuer=issuer,
        options={"require": ["exp", "iat", "iss", "aud", "sub"]},
    )
    print(json.dumps(claims, sort_keys=True))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except jwt.PyJWTError as error:
        print(f"invalid token: {type(error).__name__}: {error}", file=sys.stderr)
        sys.exit(1)
