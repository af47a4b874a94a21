"""The MPI SSH keys, made with `cryptography` (no ssh-keygen binary or extra image needed).

One module for the install hook (the release namespace's Secret, ``hooks/dynamo_hooks/secrets.py``) and the
operator (each graph namespace's own keys, ``controllers/mpisecret.py``): both write the same layout, which
the launch scripts of ``render/multinode.py`` read.

TensorRT-LLM multinode workers mount the Secret at /ssh-pk and read `private.key` and `private.key.pub`
(the names upstream's keygen Job and operator use); `authorized_keys` is added so sshd can point at the
mounted file directly. RSA 3072 rather than Ed25519: FIPS-mode OpenSSH builds in some images refuse Ed25519,
which broke upstream's keygen Job once.

The workers' sshd host key lives in the same Secret (`host.key`, `host.key.pub`) with a `known_hosts` line
pinning it for every host name (`*`): the leader's ssh then checks the key the worker presents
(``StrictHostKeyChecking=yes``) instead of trusting whatever answers on port 2222. One host key for all
workers of a Secret, because the workers are interchangeable and their names are not known when the keys
are made. ECDSA P-256: FIPS-approved like RSA, and instant to generate.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TypeVar

from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from dynamo_operator.sshlayout import (  # noqa: F401 - the layout, re-exported for the hooks
    AUTHORIZED_KEYS,
    HOST_KEY,
    HOST_KEY_COMMENT,
    HOST_KEYS,
    HOST_PUBLIC_KEY,
    KEY_COMMENT,
    KNOWN_HOSTS,
    MPI_SSH_KEYS,
    PRIVATE_KEY,
    PUBLIC_KEY,
    USER_KEYS,
)

_T = TypeVar("_T")


@dataclass(frozen=True)
class SshKeyPair:
    private_openssh: bytes  # "-----BEGIN OPENSSH PRIVATE KEY-----", as ssh-keygen writes it
    public_openssh: bytes  # "ssh-rsa AAAA... dynamo-mpi-run\n"

    def secret_data(self) -> dict[str, bytes]:
        return {
            PRIVATE_KEY: self.private_openssh,
            PUBLIC_KEY: self.public_openssh,
            AUTHORIZED_KEYS: self.public_openssh,
        }


@dataclass(frozen=True)
class HostKey:
    private_openssh: bytes
    public_openssh: bytes  # "ecdsa-sha2-nistp256 AAAA... dynamo-mpi-host\n"

    def secret_data(self) -> dict[str, bytes]:
        return {
            HOST_KEY: self.private_openssh,
            HOST_PUBLIC_KEY: self.public_openssh,
            KNOWN_HOSTS: known_hosts(self.public_openssh),
        }


def known_hosts(public_openssh: bytes) -> bytes:
    """A known_hosts line accepting ``public_openssh`` for any host name and port (the pattern ``*``
    matches ``[worker-1.svc]:2222`` too)."""
    return b"* " + public_openssh.strip() + b"\n"


def generate_host_key(comment: str = HOST_KEY_COMMENT) -> HostKey:
    key = ec.generate_private_key(ec.SECP256R1())
    pair = _pair(key, comment)
    return HostKey(pair.private_openssh, pair.public_openssh)


def host_key_from_private(private_pem: bytes, comment: str = HOST_KEY_COMMENT) -> HostKey:
    """The host key's public half and known_hosts line from its stored private key (unchanged); raises
    ValueError if unreadable."""
    pair = keypair_from_private(private_pem, comment)
    return HostKey(pair.private_openssh, pair.public_openssh)


def generate_keypair(key_size: int = 3072, comment: str = KEY_COMMENT) -> SshKeyPair:
    key = rsa.generate_private_key(public_exponent=65537, key_size=key_size)
    return _pair(key, comment)


def _pair(key: object, comment: str) -> SshKeyPair:
    private = key.private_bytes(  # type: ignore[attr-defined]
        serialization.Encoding.PEM, serialization.PrivateFormat.OpenSSH, serialization.NoEncryption()
    )
    public = key.public_key().public_bytes(  # type: ignore[attr-defined]
        serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH
    )
    return SshKeyPair(private, public + b" " + comment.encode() + b"\n")


# Namespaces whose keys' public halves are remembered: every reconcile of every graph with an MPI component
# checks its namespace's Secret (``controllers/mpisecret.py``), and loading an RSA private key with its checks
# was 7% of a test operator's CPU (a py-spy profile, docs/testing.md); the key changes only with its Secret.
# Each entry is the private key the informer's cache holds anyway and its public line: a few KB.
DERIVED_KEYS_CACHED = 1024


@functools.lru_cache(maxsize=DERIVED_KEYS_CACHED)
def keypair_from_private(private_pem: bytes, comment: str = KEY_COMMENT) -> SshKeyPair:
    """Rebuild the public half from a stored private key (OpenSSH or PEM); raises ValueError if unreadable.

    Used to complete a Secret that has the private key but lost a public entry, without rotating the key.
    The stored private bytes are returned unchanged. Pure, so remembered (an unreadable key is not).
    """
    try:
        key = serialization.load_ssh_private_key(private_pem, password=None)
    except (ValueError, TypeError, UnsupportedAlgorithm):
        key = serialization.load_pem_private_key(private_pem, password=None)  # raises ValueError if not PEM
    derived = _pair(key, comment)
    return SshKeyPair(private_pem, derived.public_openssh)


def _readable(private: bytes | None, load: Callable[[bytes], _T]) -> _T | None:
    if not private:
        return None
    try:
        return load(private)
    except (ValueError, TypeError, UnsupportedAlgorithm):
        return None


def complete_keys(current: Mapping[str, bytes]) -> tuple[dict[str, bytes], list[str]]:
    """A whole MPI SSH data set from what a Secret holds: each readable private key kept (never rotated),
    its public half, ``authorized_keys`` and ``known_hosts`` derived from it (an edited one is restored);
    a missing or unreadable private key replaced by a new one. Returns (every ``MPI_SSH_KEYS`` entry, the
    private keys that were made new: ``PRIVATE_KEY`` and/or ``HOST_KEY``).

    For a Secret whose keys are its own to replace (the operator's per-namespace Secret: its pods roll when
    the keys change); the install hook, whose Secret may be trusted by running pods it cannot roll, refuses
    an unreadable key instead (``hooks/dynamo_hooks/secrets.py``)."""
    made: list[str] = []
    user = _readable(current.get(PRIVATE_KEY), keypair_from_private)
    if user is None:
        user, made = generate_keypair(), [PRIVATE_KEY]
    host = _readable(current.get(HOST_KEY), host_key_from_private)
    if host is None:
        host, made = generate_host_key(), [*made, HOST_KEY]
    return {**user.secret_data(), **host.secret_data()}, made
