#pragma once
// Crash points, for the tests of crash safety only: with the environment
// variable STUDIO_CRASH_AT=<phase>[:<n>], the process kills itself (SIGKILL,
// as kill -9: no destructor, no flush) the nth time (default: the first) it
// reaches that phase. Without the variable a crash point does nothing but
// read it once.
// Thread: any thread.

#include <string>

namespace studio {

void crashPoint(const std::string& phase);

}  // namespace studio
