"""Which examples each cluster test applies: ``test_multinode_cluster`` the multinode ones (on every
pathway), ``test_examples`` every other; ``test_examples`` checks that together they cover ``examples/``."""

MULTINODE = ["vllm-disagg-multinode", "sglang-multinode", "trtllm-multinode"]
