"""The entries of an MPI SSH Secret, by name: a leaf module (no `cryptography`), so that rendering, which only
names them, does not load the key generator (``sshkeys``) that the install hook and the operator run."""

PRIVATE_KEY = "private.key"
PUBLIC_KEY = "private.key.pub"
AUTHORIZED_KEYS = "authorized_keys"
KEY_COMMENT = "dynamo-mpi-run"
HOST_KEY = "host.key"
HOST_PUBLIC_KEY = "host.key.pub"
KNOWN_HOSTS = "known_hosts"
HOST_KEY_COMMENT = "dynamo-mpi-host"
USER_KEYS = (PRIVATE_KEY, PUBLIC_KEY, AUTHORIZED_KEYS)
HOST_KEYS = (HOST_KEY, HOST_PUBLIC_KEY, KNOWN_HOSTS)
MPI_SSH_KEYS = USER_KEYS + HOST_KEYS  # every entry of an MPI SSH Secret, and nothing else
