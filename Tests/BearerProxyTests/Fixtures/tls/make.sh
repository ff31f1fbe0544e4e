#!/usr/bin/env bash
# Regenerates the TLS fixtures used by the bearer-proxy tests.
#
# TEST-ONLY KEYS. These private keys are committed on purpose so the tests can run a local TLS
# upstream (FakeUpstream with tls: true) and have the proxy trust it through a configured CA file.
# They protect nothing and must never be used outside the test suite.
#
# Output (in this directory):
#   ca.pem          test CA certificate (EC P-256, valid 100 years)
#   server.pem      server certificate signed by the CA, SAN IP:127.0.0.1, DNS:localhost
#   server-key.pem  the server certificate's private key (PKCS#8, unencrypted)
#
# The CA's key is not kept: regenerate everything at once by running this script.
set -euo pipefail
cd "$(dirname "$0")"

days=36500
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

openssl ecparam -name prime256v1 -genkey -noout -out "$work/ca-key.ec.pem"
openssl pkcs8 -topk8 -nocrypt -in "$work/ca-key.ec.pem" -out "$work/ca-key.pem"
openssl req -x509 -new -key "$work/ca-key.pem" -sha256 -days "$days" \
    -subj "/CN=bearer-proxy test CA (test only)" \
    -addext "basicConstraints=critical,CA:TRUE" \
    -addext "keyUsage=critical,keyCertSign,cRLSign" \
    -addext "subjectKeyIdentifier=hash" \
    -out ca.pem

openssl ecparam -name prime256v1 -genkey -noout -out "$work/server-key.ec.pem"
openssl pkcs8 -topk8 -nocrypt -in "$work/server-key.ec.pem" -out server-key.pem
chmod 644 server-key.pem
openssl req -new -key server-key.pem -subj "/CN=localhost" -out "$work/server.csr"
cat > "$work/server.ext" <<'EXT'
basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature
extendedKeyUsage=serverAuth
subjectAltName=IP:127.0.0.1,DNS:localhost
subjectKeyIdentifier=hash
authorityKeyIdentifier=keyid
EXT
openssl x509 -req -in "$work/server.csr" -CA ca.pem -CAkey "$work/ca-key.pem" -CAcreateserial -CAserial "$work/ca.srl" \
    -sha256 -days "$days" -extfile "$work/server.ext" -out server.pem

openssl verify -CAfile ca.pem server.pem
