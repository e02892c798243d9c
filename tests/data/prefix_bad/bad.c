/* bad.c: a planted violation for test_prefix_detects: an exported helper without ct_. */
int helper_without_prefix(int x);
int helper_without_prefix(int x) { return x + 1; }
