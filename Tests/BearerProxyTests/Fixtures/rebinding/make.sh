#!/usr/bin/env bash
# Regenerates the TLS fixtures of the DNS-rebinding tests (DNSRebindingTests, #25).
#
# TEST-ONLY KEYS, committed on purpose (as in ../tls): they protect nothing and must never be used outside the
# test suite. The names are under `.test` (RFC 6761 §6.2), which no resolver answers: the tests resolve them with
# a resolver of their own, and TLS checks the certificate against the name while the connection goes to a
# loopback address.
#
# Output (in this directory):
#   ca.pem          a test CA of its own (EC P-256, valid 100 years)
#   server.pem      signed by it, SAN DNS:*.rebind.test
#   server-key.pem  its private key (PKCS#8, unencrypted)
set -euo pipefail
cd "$(dirname "$0")"

days=36500
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

openssl ecparam -name prime256v1 -genkey -noout -out "$work/ca-key.ec.pem"
openssl pkcs8 -topk8 -nocrypt -in "$work/ca-key.ec.pem" -out "$work/ca-key.pem"
openssl req -x509 -new -key "$work/ca-key.pem" -sha256 -days "$days" \
    -subj "/CN=bearer-proxy rebinding test CA (test only)" \
    -addext "basicConstraints=critical,CA:TRUE" \
    -addext "keyUsage=critical,keyCertSign,cRLSign" \
    -addext "subjectKeyIdentifier=hash" \
    -out ca.pem

openssl ecparam -name prime256v1 -genkey -noout -out "$work/server-key.ec.pem"
openssl pkcs8 -topk8 -nocrypt -in "$work/server-key.ec.pem" -out server-key.pem
chmod 644 server-key.pem
openssl req -new -key server-key.pem -subj "/CN=rebind.test" -out "$work/server.csr"
cat > "$work/server.ext" <<'EXT'
basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature
extendedKeyUsage=serverAuth
subjectAltName=DNS:*.rebind.test
subjectKeyIdentifier=hash
authorityKeyIdentifier=keyid
EXT
openssl x509 -req -in "$work/server.csr" -CA ca.pem -CAkey "$work/ca-key.pem" -CAcreateserial -CAserial "$work/ca.srl" \
    -sha256 -days "$days" -extfile "$work/server.ext" -out server.pem

openssl verify -CAfile ca.pem server.pem
