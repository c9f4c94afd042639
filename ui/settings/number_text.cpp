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

QString valueText(const nlohmann::json& v, FieldType type) {
  if (type == FieldType::Size && v.is_array() && v.size() == 2 && v[0].is_number_integer() &&
      v[1].is_number_integer()) {
    if (v[0].get<int64_t>() == 0 && v[1].get<int64_t>() == 0) return "auto";
    return QString("%1x%2").arg(v[0].get<int64_t>()).arg(v[1].get<int64_t>());
  }
  if (type == FieldType::TextList && v.is_array()) {
    QStringList items;
    for (const auto& item : v)
      items << (item.is_string() ? QString::fromStdString(item.get<std::string>())
                                 : QString::fromStdString(item.dump()));
    return items.join(", ");
  }
  if (v.is_string()) return QString::fromStdString(v.get<std::string>());
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  if (v.is_number_unsigned()) return QString::number(v.get<uint64_t>());
  if (v.is_number_integer()) return QString::number(v.get<int64_t>());
  if (v.is_number_float()) return shortest(v.get<double>());
  return QString::fromStdString(v.dump());
}

}  // namespace studio::ui
