"""The protocol, as docs/PROTOCOL.md (cited "P§n") and docs/GAMES.md ("G§n") define it, for a
verifier that trusts nobody: every hash, encoding, group law, proof check and game rule, and the
steps of P§13 (epoch games) and P§14 (pool-served games) built from them.

Written from the documents alone, without the service's code, and standard library only (so
tools/docs-verifier runs it with a bare python3). Where the documents settle a point, the code
cites the section. `vrs_client.verify` is the typed front end; `run.verify_game` the engine.

Modules, each using only those above it: encoding, primes, rsa, classgroup, groups, ed25519,
merkle, witnessed, games, source, steps, members, run, tamper.
"""
