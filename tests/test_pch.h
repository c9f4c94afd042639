#pragma once
// Precompiled headers for the suites (tests/CMakeLists.txt): what every suite
// of a kind parses before its own code. STUDIO_TEST_PCH_TORCH: the engine's
// torch headers too (the TORCH suites); STUDIO_TEST_PCH_UI: the widgets and
// QCustomPlot (the UI suites, which keep Qt's keywords and never see torch).
#include <QtTest/QtTest>

#include <nlohmann/json.hpp>

#if defined(STUDIO_TEST_PCH_TORCH)
#include "torch_pch.h"
#elif defined(STUDIO_TEST_PCH_UI)
#include <qcustomplot.h>
#include <QtWidgets>
#endif
