// The doctest main of report_observe_tests (reports, trace, HTML, progress,
// metrics, NVML sampler, observer).
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
