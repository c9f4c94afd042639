"""What only a hang reaches, for the Python suites (tests/test_support.h's
kHangLimitMs for the Qt Test ones): a suite waits for an event (a process's
exit, a line of its output, a file) for at most this long, and asserts what
happened, never how fast. A busy machine only makes a suite take longer;
ctest's limit per suite (tests/CMakeLists.txt) is above it."""
HANG_LIMIT_S = 600
