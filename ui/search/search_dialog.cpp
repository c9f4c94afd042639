#include "ui/search/search_dialog.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QSpinBox>
#include <QTableWidget>
#include <QVBoxLayout>

#include <cmath>
#include <variant>

#include "studio/errors.h"
#include "studio/settings_schema.h"
#include "ui/common/form_dialog.h"

namespace studio::ui {
namespace {

double numberOf(const FieldSpec& f, const TrainConfig& c) {
  TrainConfig copy = c;
  const FieldRef ref = f.member(copy);
  if (auto* d = std::get_if<double*>(&ref)) return **d;
  if (auto* i = std::get_if<int*>(&ref)) return **i;
  if (auto* l = std::get_if<int64_t*>(&ref)) return static_cast<double>(**l);
  return 0;
}

QString num(double v) { return QString::number(v, 'g', 6); }

}  // namespace

SearchDialog::SearchDialog(const TrainConfig& base, QWidget* parent)
    : QDialog(parent),
      m_base(base),
      m_table(new QTableWidget(0, 2)),
      m_metric(new QComboBox),
      m_direction(new QComboBox),
      m_sampler(new QComboBox),
      m_pruner(new QComboBox),
      m_trials(new QSpinBox),
      m_parallel(new QSpinBox),
      m_trialSettings(new QPlainTextEdit),
      m_name(new QLineEdit),
      m_problems(new QLabel),
      m_warnings(new QLabel),
      m_buttons(new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel)) {
  setWindowTitle(tr("Search"));
  setObjectName("searchDialog");
  auto* form = new QFormLayout(this);
  form->addRow(
      new QLabel(tr("Optuna samples these settings of the form's, trains each sample as a run, and stops "
                    "hopeless runs early. The study and its runs go to the Runs folder.")));
  auto* pick = new QComboBox;
  pick->setObjectName("searchSetting");
  for (const auto& f : settingsSchema())
    if (settingSearchable(f)) pick->addItem(QString::fromStdString(f.path));
  auto* add = new QPushButton(tr("Add"));
  auto* remove = new QPushButton(tr("Remove"));
  auto* row = new QHBoxLayout;
  row->addWidget(pick, 1);
  row->addWidget(add);
  row->addWidget(remove);
  form->addRow(tr("Setting"), row);
  m_table->setObjectName("searchSpace");
  m_table->setHorizontalHeaderLabels({tr("Setting"), tr("Range")});
  m_table->horizontalHeader()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
  m_table->horizontalHeader()->setStretchLastSection(true);
  m_table->setToolTip(tr("Range: float:LOW:HIGH[:log], int:LOW:HIGH[:log|pow2] or choice:A,B,..."));
  m_table->setMinimumHeight(140);
  form->addRow(m_table);
  for (const auto& m : searchMetrics()) m_metric->addItem(QString::fromStdString(m));
  m_metric->setObjectName("searchMetric");
  m_metric->setCurrentText(QString::fromStdString(SearchSpec{}.metric));  // the CLI's default, eval_accuracy
  m_direction->addItems({tr("the metric's own"), "maximize", "minimize"});
  auto* metricRow = new QHBoxLayout;
  metricRow->addWidget(m_metric, 1);
  metricRow->addWidget(m_direction);
  form->addRow(tr("Metric"), metricRow);
  for (const char* s : kSearchSamplers) m_sampler->addItem(s);
  for (const char* p : kSearchPruners) m_pruner->addItem(p);
  m_sampler->setToolTip(tr("tpe learns from the trials so far; random draws each anew; grid tries every combination"));
  m_pruner->setToolTip(tr("Stops a trial whose evaluations trail the others' at the same point"));
  form->addRow(tr("Sampler"), m_sampler);
  form->addRow(tr("Pruner"), m_pruner);
  m_trials->setRange(1, 10000);
  m_trials->setValue(20);
  m_parallel->setRange(1, 64);
  m_parallel->setToolTip(
      tr("Trials at once: the CPU's cores are divided between them; on one GPU as many as its "
         "memory holds; on several, one each"));
  form->addRow(tr("Trials"), m_trials);
  form->addRow(tr("At once"), m_parallel);
  m_trialSettings->setPlaceholderText(
      tr("For the trials only, a key=value a line (train.epochs=2); Train best "
         "leaves them out"));
  m_trialSettings->setMaximumHeight(60);
  form->addRow(tr("Trial settings"), m_trialSettings);
  m_name->setPlaceholderText(tr("the settings' name and the time"));
  form->addRow(tr("Study name"), m_name);
  // The problems and warnings in a place of their own height, scrolled when
  // long: the dialog kept growing and shrinking as they came and went, and
  // OK moved under the mouse (issue 60).
  auto* messages = new QWidget;
  auto* messagesLayout = new QVBoxLayout(messages);
  messagesLayout->setContentsMargins(0, 0, 0, 0);
  for (QLabel* l : {m_problems, m_warnings}) {
    l->setWordWrap(true);
    l->setTextInteractionFlags(Qt::TextSelectableByMouse);
    messagesLayout->addWidget(l);
  }
  messagesLayout->addStretch();
  auto* scroll = new QScrollArea;
  scroll->setObjectName("searchMessages");
  scroll->setWidget(messages);
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::NoFrame);
  scroll->setFixedHeight(fontMetrics().lineSpacing() * 5 + 4);
  form->addRow(scroll);
  m_problems->setObjectName("searchProblems");
  m_problems->setStyleSheet("color: #d03c2f");
  m_warnings->setObjectName("searchWarnings");
  m_warnings->setStyleSheet("color: #b07000");
  form->addRow(m_buttons);
  connect(m_buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
  connect(m_buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  connect(add, &QPushButton::clicked, this, [this, pick] { addParam(pick->currentText()); });
  connect(remove, &QPushButton::clicked, this, [this] {
    if (m_table->currentRow() >= 0) m_table->removeRow(m_table->currentRow());
    recheck();
  });
  connect(m_table, &QTableWidget::itemChanged, this, [this] { recheck(); });
  for (QComboBox* c : {m_metric, m_direction, m_sampler, m_pruner})
    connect(c, &QComboBox::currentIndexChanged, this, [this] { recheck(); });
  for (QSpinBox* s : {m_trials, m_parallel}) connect(s, &QSpinBox::valueChanged, this, [this] { recheck(); });
  connect(m_trialSettings, &QPlainTextEdit::textChanged, this, [this] { recheck(); });
  connect(m_name, &QLineEdit::textChanged, this, [this] { recheck(); });
  // A first row: the rate that acts under the form's schedule.
  addParam(QString::fromStdString(learningRateSetting(m_base)));
}

QString SearchDialog::suggestedRange(const QString& key) const {
  const FieldSpec* f = findSetting(key.toStdString());
  if (!f) return {};
  if (f->type == FieldType::Bool) return "choice:true,false";
  if (f->type == FieldType::Choice) {
    QStringList c;
    for (const auto& v : f->choices) c << QString::fromStdString(v);
    return "choice:" + c.join(',');
  }
  const double v = numberOf(*f, m_base);
  const double lo = f->range ? f->range->lo : 0, hi = f->range ? f->range->hi : INFINITY;
  if (f->type == FieldType::Int) {
    const long long a = std::max<long long>(static_cast<long long>(std::ceil(lo + (f->range && f->range->loOpen))),
                                            static_cast<long long>(v / 2)),
                    b = std::max<long long>(a + 1, static_cast<long long>(std::min(hi, v * 2)));
    return key.endsWith("batch_size") ? QString("int:%1:%2:pow2").arg(a).arg(b) : QString("int:%1:%2").arg(a).arg(b);
  }
  if (std::isfinite(hi)) {  // a fraction, a momentum: the open range less its ends
    const double top = f->range->hiOpen ? hi - (hi - lo) / 100 : hi;
    const double bottom = f->range->loOpen ? lo + (hi - lo) / 100 : lo;
    return "float:" + num(bottom) + ":" + num(top);
  }
  if (v > 0) return "float:" + num(v / 10) + ":" + num(v * 10) + ":log";
  return "float:0:1";
}

void SearchDialog::addParam(const QString& key, const QString& range) {
  const QSignalBlocker block(m_table);
  const int r = m_table->rowCount();
  m_table->insertRow(r);
  auto* k = new QTableWidgetItem(key);
  k->setFlags(k->flags() & ~Qt::ItemIsEditable);
  m_table->setItem(r, 0, k);
  m_table->setItem(r, 1, new QTableWidgetItem(range.isEmpty() ? suggestedRange(key) : range));
  m_table->setCurrentCell(r, 1);
  recheck();
}

SearchSpec SearchDialog::spec() const {
  SearchSpec s;
  s.base = m_base;
  for (int r = 0; r < m_table->rowCount(); ++r)
    s.space.push_back(
        parseSearchParam((m_table->item(r, 0)->text() + "=" + m_table->item(r, 1)->text()).toStdString()));
  s.trialSettings = settingLines(m_trialSettings->toPlainText());
  s.metric = m_metric->currentText().toStdString();
  s.direction = m_direction->currentIndex() == 0 ? "" : m_direction->currentText().toStdString();
  s.sampler = m_sampler->currentText().toStdString();
  s.pruner = m_pruner->currentText().toStdString();
  s.trials = m_trials->value();
  s.parallel = m_parallel->value();
  s.name = m_name->text().trimmed().isEmpty() ? m_base.name : m_name->text().trimmed().toStdString();
  checkSearch(s);
  return s;
}

QStringList SearchDialog::cliArguments() const {
  const SearchSpec s = spec();
  QStringList a;
  for (const auto& p : s.space) a << "--space" << QString::fromStdString(searchParamText(p));
  for (const auto& t : s.trialSettings) a << "--trial-set" << QString::fromStdString(t);
  a << "--metric" << QString::fromStdString(s.metric) << "--direction" << QString::fromStdString(s.direction)
    << "--sampler" << QString::fromStdString(s.sampler) << "--pruner" << QString::fromStdString(s.pruner) << "--trials"
    << QString::number(s.trials) << "--parallel" << QString::number(s.parallel);
  if (!m_name->text().trimmed().isEmpty()) a << "--name" << m_name->text().trimmed();
  return a;
}

QString SearchDialog::problems() const {
  try {
    spec();
    return {};
  } catch (const InputError& e) {
    // The CLI's words, less its option names: the table's rows are the --space ones.
    return QString::fromStdString(e.what())
        .replace("the search cannot start:\n  ", "")
        .replace("\n  ", "\n")
        .replace("--space ", "");
  }
}

QString SearchDialog::warnings() const {
  try {
    QStringList w;
    for (const auto& n : searchWarnings(spec())) w << QString::fromStdString(n);
    return w.join('\n');
  } catch (const InputError&) {
    return {};
  }
}

void SearchDialog::recheck() {
  const QString p = problems();
  m_problems->setText(p);
  m_problems->setVisible(!p.isEmpty());
  const QString w = warnings();
  m_warnings->setText(w);
  m_warnings->setVisible(!w.isEmpty());
  m_buttons->button(QDialogButtonBox::Ok)->setEnabled(p.isEmpty());
}

}  // namespace studio::ui
