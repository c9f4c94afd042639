#!/usr/bin/env python3
"""The suites' time against their budget (issue 58), from the JUnit file that
make test's ctest writes (build/suites.xml): prints the wall time of the
whole run, the ten slowest suites, and fails (exit 1) when the wall time
passes the budget by more than a quarter, so that a change that makes the
suites slow is seen in that change. CI runs it after make test; on a
person's machine, make test itself never fails on time.

  tools/suite_budget.py build/suites.xml [--budget-s 360] [--slowest 10]
"""
import argparse
import sys
import xml.etree.ElementTree as ET


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("junit", help="ctest --output-junit's file")
    parser.add_argument("--budget-s", type=float, default=360.0,
                        help="the suites' wall time at -j2 on the 2-core machine (docs/testing.md)")
    parser.add_argument("--slowest", type=int, default=10)
    args = parser.parse_args()
    try:
        root = ET.parse(args.junit).getroot()
    except (OSError, ET.ParseError) as e:
        print(f"suite_budget: cannot read {args.junit}: {e} (make test writes it)", file=sys.stderr)
        return 2
    suite = root if root.tag == "testsuite" else root.find("testsuite")
    cases = [(float(c.get("time", 0)), c.get("name"), c.get("status", "")) for c in suite.iter("testcase")]
    wall = float(suite.get("time", 0))
    limit = 1.25 * args.budget_s
    print(f"suites: {len(cases)} in {wall:.0f} s wall (budget {args.budget_s:.0f} s, fails past {limit:.0f} s); "
          f"{sum(t for t, _, _ in cases):.0f} s of suite time")
    print(f"the {min(args.slowest, len(cases))} slowest:")
    for t, name, status in sorted(cases, reverse=True)[:args.slowest]:
        print(f"  {t:7.1f} s  {name}{'' if status in ('run', '') else '  (' + status + ')'}")
    if wall > limit:
        print(f"suite_budget: the suites took {wall:.0f} s, more than the budget's {args.budget_s:.0f} s by over "
              "a quarter: make the slow suites above smaller (docs/testing.md says how)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
