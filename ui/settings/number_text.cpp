#include "ui/settings/number_text.h"

#include <QLocale>

#include <charconv>
#include <cmath>

namespace studio::ui {

// The shortest text that reads back as v; a value that is exactly a small
// fraction with no short decimal (torchvision's 3/4 and 4/3) as "4/3", which
// the form reads back to the same double (1.3333333333333333 was shown).
QString shortest(double v) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  const QString text =
      ec == std::errc() ? QString::fromLatin1(buf, static_cast<int>(end - buf)) : QString::number(v, 'g', 17);
  if (text.size() <= 8 || !std::isfinite(v)) return text;
  for (int q = 2; q <= 12; ++q) {
    const double p = std::round(v * q);
    if (std::fabs(p) < 1000 && p / q == v) return QString("%1/%2").arg(static_cast<qint64>(p)).arg(q);
  }
  return text;
}

// "1.5", or a fraction "4/3" (as shortest shows one).
double realOf(const QString& text, bool* ok) {
  const int slash = text.indexOf('/');
  if (slash < 0) return QLocale::c().toDouble(text, ok);
  bool okP = false, okQ = false;
  const double p = QLocale::c().toDouble(text.left(slash).trimmed(), &okP);
  const double q = QLocale::c().toDouble(text.mid(slash + 1).trimmed(), &okQ);
  *ok = okP && okQ && q != 0;
  return *ok ? p / q : 0;
}

}  // namespace studio::ui
