#!/usr/bin/env bash
# Records OpenSSL's verdict on every path-validation fixture: for each case of cases.txt in
# each algorithm's directory, `openssl verify -x509_strict` at the cases' time (2026-06-01T00:00:00Z) with
# the case's purpose, writing "<case> OK" or "<case> error <n> <text>" to openssl-verdicts.txt.
# Usage: openssl-verdicts.sh /path/to/openssl-3.6/bin/openssl
set -euo pipefail
openssl=${1:?usage: $0 OPENSSL_BINARY}
"$openssl" version | grep -q '^OpenSSL 3\.[6-9]' || { echo "need OpenSSL 3.6 or newer"; exit 1; }
cd "$(dirname "$0")"
at=1780272000
for dir in */; do
    dir=${dir%/}
    [ -f "$dir/cases.txt" ] || continue
    out="$dir/openssl-verdicts.txt"
    : > "$out"
    while read -r name purpose _expect; do
        args=(-x509_strict -attime "$at" -CAfile "$dir/$name.ca.pem")
        case $purpose in
            serverAuth) args+=(-purpose sslserver) ;;
            clientAuth) args+=(-purpose sslclient) ;;
            codeSigning) args+=(-purpose codesign) ;;
        esac
        [ -s "$dir/$name.untrusted.pem" ] && args+=(-untrusted "$dir/$name.untrusted.pem")
        if result=$("$openssl" verify "${args[@]}" "$dir/$name.leaf.pem" 2>&1); then
            echo "$name OK" >> "$out"
        else
            err=$(printf '%s\n' "$result" | grep -m1 -o 'error [0-9]* at [0-9]* depth lookup: .*' || printf '%s' "$result" | tr '\n' ' ')
            echo "$name $err" >> "$out"
        fi
    done < "$dir/cases.txt"
    echo "$out: $(grep -c ' OK$' "$out") OK, $(grep -vc ' OK$' "$out") rejected"
done
"$openssl" version > openssl-version.txt
