#include "ui/predict/predict_panel.h"

#include <QComboBox>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMimeData>
#include <QPainter>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QSlider>
#include <QSplitter>
#include <QStackedWidget>
#include <QTableWidget>
#include <QVBoxLayout>

#include <cmath>
#include <mutex>

#include "studio/mask_predict.h"
#include "ui/common/number_item.h"
#include "ui/predict/box_predict_view.h"
#include "ui/predict/held_predictor.h"
#include "ui/predict/mask_predict_view.h"

namespace studio::ui {
namespace {

constexpr int kBars = 5;
enum Column { Source, Predicted, Confidence, TopK, Label, Problem, Columns };

// A row's position in the report, kept in its first cell (rows get sorted).
constexpr int kRowRole = Qt::UserRole + 1;
// The classes or labels a row is predicted as (the filter's choices), kept in its Predicted cell.
constexpr int kInRole = Qt::UserRole + 2;

// Blue (cold) to red (hot), as the usual jet-like maps.
QColor heatColour(float v) {
  return QColor::fromHsvF(static_cast<float>((1.0 - std::clamp(v, 0.0f, 1.0f)) * 0.66), 1.0f, 1.0f);
}

}  // namespace

PredictPanel::PredictPanel(QWidget* parent) : QWidget(parent), m_held(std::make_shared<HeldPredictor>()) {
  setObjectName("predictPanel");
  setAcceptDrops(true);
  m_model = new QLabel(tr("Select a finished run in the Runs list, or choose a run or export folder with Model…"));
  m_model->setWordWrap(true);
  auto* chooseModel = new QPushButton(tr("Model…"));
  m_weights = new QComboBox;
  m_weights->addItem(tr("the test figures' weights"), "auto");
  m_weights->setToolTip(
      tr("auto: the weights the run's test figures are of (the best checkpoint's for a run with a "
         "validation split, else the last), as export and predict use them"));
  m_weights->addItem(tr("best weights"), "best");
  m_weights->addItem(tr("last weights"), "last");
  m_weights->addItem(tr("moving average (train.ema)"), "ema");
  m_tta = new QComboBox;
  m_tta->setObjectName("predictTta");
  m_tta->addItem(tr("each image as it is"), QString::fromStdString(nameOf(TestTimeAugmentation::none)));
  m_tta->addItem(tr("averaged with its mirror"), QString::fromStdString(nameOf(TestTimeAugmentation::flip)));
  m_tta->addItem(tr("averaged over five crops"), QString::fromStdString(nameOf(TestTimeAugmentation::five_crop)));
  m_tta->setToolTip(
      tr("Test-time augmentation (predict --tta): each image's probabilities as they are, averaged "
         "with its horizontal mirror's, or averaged over the four corners and the centre of the image "
         "resized to 8/7 of the model's input (images larger than the input)"));
  // It takes a table too (a table model's rows), so it is not called "Add images…" (issue 60).
  auto* addImages = new QPushButton(tr("Add files…"));
  addImages->setObjectName("predictAddFiles");
  addImages->setToolTip(tr("Image files, or a CSV table for a model trained on a table"));
  auto* addFolder = new QPushButton(tr("Add folder…"));
  m_filter = new QComboBox;
  m_filter->setObjectName("predictFilter");
  m_filter->addItem(tr("All classes"), QString());
  m_save = new QPushButton(tr("Save CSV…"));
  m_save->setEnabled(false);
  m_status = new QLabel(tr("Drop image files or folders here (or a CSV table for a table's model)."));
  m_status->setWordWrap(true);

  m_table = new QTableWidget(0, Columns);
  m_table->setMinimumSize(240, 120);
  m_table->setObjectName("predictTable");
  m_table->setHorizontalHeaderLabels(
      {tr("File or row"), tr("Predicted"), tr("Confidence"), tr("Top 5"), tr("Label"), tr("Problem")});
  m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
  m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
  m_table->setSelectionMode(QAbstractItemView::SingleSelection);
  m_table->horizontalHeader()->setStretchLastSection(true);
  m_table->setWordWrap(false);
  m_table->setColumnWidth(Source, 160);
  m_table->setColumnWidth(Confidence, 90);
  m_table->setColumnWidth(TopK, 330);
  m_table->verticalHeader()->hide();

  m_preview = new QLabel;
  m_preview->setObjectName("predictPreview");
  m_preview->setMinimumSize(160, 160);
  m_preview->setAlignment(Qt::AlignCenter);
  m_camNote = new QLabel;
  m_camNote->setWordWrap(true);
  m_opacity = new QSlider(Qt::Horizontal);
  m_opacity->setObjectName("camOpacity");
  m_opacity->setRange(0, 100);
  m_opacity->setValue(50);
  m_opacity->setToolTip(tr("Grad-CAM overlay: 0 shows the image alone"));
  auto* side = new QWidget;
  auto* sideLayout = new QVBoxLayout(side);
  sideLayout->addWidget(m_preview);
  m_opacityRow = new QWidget;
  auto* opacityRow = new QHBoxLayout(m_opacityRow);
  opacityRow->setContentsMargins(0, 0, 0, 0);
  opacityRow->addWidget(new QLabel(tr("Grad-CAM")));
  opacityRow->addWidget(m_opacity);
  sideLayout->addWidget(m_opacityRow);
  sideLayout->addWidget(m_camNote);
  for (int i = 0; i < kBars; ++i) {
    auto* name = new QLabel;
    auto* bar = new QProgressBar;
    bar->setRange(0, 1000);
    bar->setTextVisible(true);
    sideLayout->addWidget(name);
    sideLayout->addWidget(bar);
    m_bars.emplace_back(name, bar);
  }
  sideLayout->addStretch(1);

  // Two short rows, so the tab fits a small screen's window.
  auto* modelRow = new QHBoxLayout;
  modelRow->addWidget(chooseModel);
  modelRow->addWidget(m_weights);
  modelRow->addWidget(m_tta);
  modelRow->addStretch(1);
  auto* inputRow = new QHBoxLayout;
  inputRow->addWidget(addImages);
  inputRow->addWidget(addFolder);
  inputRow->addStretch(1);
  inputRow->addWidget(new QLabel(tr("Show")));
  inputRow->addWidget(m_filter);
  inputRow->addWidget(m_save);
  auto* sideScroll = new QScrollArea;
  sideScroll->setWidget(side);
  sideScroll->setWidgetResizable(true);
  sideScroll->setFrameShape(QFrame::NoFrame);
  sideScroll->setMinimumWidth(200);
  auto* split = new QSplitter(Qt::Horizontal);
  split->addWidget(m_table);
  split->addWidget(sideScroll);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 1);
  // A detector's run shows its boxes instead (box_predict_view.h).
  m_boxView = new BoxPredictView;
  m_pages = new QStackedWidget;
  m_pages->addWidget(split);
  m_pages->addWidget(m_boxView);
  m_maskView = new MaskPredictView;
  m_pages->addWidget(m_maskView);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(m_model);
  layout->addLayout(modelRow);
  layout->addLayout(inputRow);
  layout->addWidget(m_pages, 1);
  layout->addWidget(m_status);

  connect(chooseModel, &QPushButton::clicked, this, [this] {
    const QString dir = QFileDialog::getExistingDirectory(this, tr("A run folder or an export folder"), m_folder);
    if (!dir.isEmpty()) setModelFolder(dir);
  });
  connect(addImages, &QPushButton::clicked, this, [this] {
    const QStringList files = QFileDialog::getOpenFileNames(
        this, tr("Images or a table"), QString(),
        tr("Images and tables (*.png *.jpg *.jpeg *.bmp *.pgm *.ppm *.csv *.tsv *.txt);;All files (*)"));
    if (!files.isEmpty()) predictPaths(files);
  });
  connect(addFolder, &QPushButton::clicked, this, [this] {
    const QString dir = QFileDialog::getExistingDirectory(this, tr("A folder of images"));
    if (!dir.isEmpty()) predictPaths({dir});
  });
  connect(m_filter, &QComboBox::currentIndexChanged, this,
          [this] { setClassFilter(m_filter->currentData().toString()); });
  connect(m_save, &QPushButton::clicked, this, [this] {
    if (showsMasks()) return m_maskView->saveChosen();
    if (showsBoxes()) return m_boxView->saveChosen();
    const QString path =
        QFileDialog::getSaveFileName(this, tr("Save predictions"), "predictions.csv", tr("CSV (*.csv)"));
    QString error;
    if (!path.isEmpty() && !saveCsv(path, &error)) setStatus(error, true);
  });
  connect(m_table, &QTableWidget::itemSelectionChanged, this, &PredictPanel::showSelected);
  // Other weights or another test-time augmentation: the rows listed are predicted again with them.
  auto again = [this] {
    if (!m_lastPaths.isEmpty() && !m_folder.isEmpty()) predictPaths(m_lastPaths);
  };
  connect(m_weights, &QComboBox::currentIndexChanged, this, again);
  connect(m_tta, &QComboBox::currentIndexChanged, this, again);
  connect(m_opacity, &QSlider::valueChanged, this, &PredictPanel::drawPreview);
  auto failed = [this](const QString& text, bool error) {
    if (error) setStatus(text, true);
  };
  connect(m_boxView, &BoxPredictView::message, this, failed);
  connect(m_maskView, &MaskPredictView::message, this, failed);
  connect(m_maskView, &MaskPredictView::predicted, this, [this](int images) {
    m_busy = false;
    setStatus(m_maskView->statusText(), !m_maskView->report());
    m_save->setEnabled(m_maskView->report().has_value());
    Q_EMIT predicted(images);
  });
  connect(m_boxView, &BoxPredictView::predicted, this, [this](int images) {
    m_busy = false;
    setStatus(m_boxView->statusText(), !m_boxView->report());
    m_save->setEnabled(m_boxView->report().has_value());
    Q_EMIT predicted(images);
  });
}

PredictPanel::~PredictPanel() = default;

void PredictPanel::setModelFolder(const QString& folder) {
  if (folder == m_folder) return;
  m_folder = folder;
  m_lastPaths.clear();  // another model's rows are not predicted again with this one
  // A detector's boxes, or a model's classes, values or labels.
  const bool masks = isSegmentationRun(folder.toStdString());
  const bool boxes = isDetectionRun(folder.toStdString()) || masks;  // neither a class nor values per image
  m_pages->setCurrentWidget(masks   ? static_cast<QWidget*>(m_maskView)
                            : boxes ? static_cast<QWidget*>(m_boxView)
                                    : m_pages->widget(0));
  m_filter->setVisible(!boxes);
  m_save->setText(masks ? tr("Save masks…") : boxes ? tr("Save boxes…") : tr("Save CSV…"));
  m_save->setEnabled(false);
  m_tta->setEnabled(!boxes);
  m_model->setText(tr("Model: %1").arg(folder));
}

void PredictPanel::setWeights(const QString& which) {
  const int i = m_weights->findData(which);
  if (i >= 0) m_weights->setCurrentIndex(i);
}

void PredictPanel::setTestTimeAugmentation(const QString& tta) {
  const int i = m_tta->findData(tta);
  if (i >= 0) m_tta->setCurrentIndex(i);
}

PredictOptions PredictPanel::options() const {
  PredictOptions o;
  o.which.setName(m_weights->currentData().toString().toStdString());
  o.tta.setName(m_tta->currentData().toString().toStdString());
  o.skipBad = true;  // a file that cannot be read is a row with its reason
  return o;
}

std::function<PredictPanel::Outcome()> PredictPanel::onModel(std::function<void(Predictor&, Outcome&)> use,
                                                             bool reload) const {
  return [held = m_held, folder = m_folder.toStdString(), o = m_used, use = std::move(use), reload] {
    Outcome out;
    try {
      std::lock_guard<std::mutex> lock(held->mutex);
      use(held->get(folder, o, reload), out);
    } catch (const std::exception& e) {
      out.error = QString::fromStdString(e.what());
    }
    return out;
  };
}

void PredictPanel::predictPaths(const QStringList& paths) {
  if (m_folder.isEmpty()) {
    setStatus(tr("Choose the model first: select a finished run in the Runs list, or Model…"), true);
    return;
  }
  if (paths.isEmpty()) return;
  m_lastPaths = paths;
  if (QString why; m_trustCheck && !m_trustCheck(m_folder, &why)) {
    setStatus(why, true);
    return;
  }
  m_busy = true;
  setStatus(tr("Predicting %1…")
                .arg(paths.size() == 1 ? QFileInfo(paths.front()).fileName()
                                       : tr("%n inputs", nullptr, static_cast<int>(paths.size()))));
  std::vector<std::string> inputs;
  for (const auto& p : paths) inputs.push_back(p.toStdString());
  PredictOptions o = options();
  const bool live = m_pausedHook && m_pausedHook(m_folder);
  if (live) o.which = WeightsChoice::last;  // the paused run's weights, just written
  m_used = o;
  if (showsBoxes()) {
    m_boxView->predict(m_folder, o, paths, /*reload=*/live);
    return;
  }
  if (showsMasks()) {
    m_maskView->predict(m_folder, o, paths, /*reload=*/live);
    return;
  }
  m_job.start(onModel(
                  [inputs](Predictor& predictor, Outcome& out) {
                    PredictionReport all;
                    for (const auto& input : inputs) appendReport(all, predictor.predict(input));
                    out.report = std::move(all);
                  },
                  /*reload=*/live),  // a paused run's checkpoint is new
              [this](const Outcome& out) {
                m_busy = false;
                if (!out.report) {
                  setStatus(out.error, true);
                  Q_EMIT predicted(0);
                  return;
                }
                m_report = out.report;
                fillTable();
                const auto& r = *m_report;
                QString text = tr("%1: %2 predicted in %3 s")
                                   .arg(QString::fromStdString(r.model))
                                   .arg(static_cast<qlonglong>(r.rows.size()) - r.skipped)
                                   .arg(r.seconds, 0, 'f', 2);
                if (r.labelled > 0)
                  text +=
                      (r.input == PredictInput::image ? tr("; accuracy %1 % on the %2 labelled by their class folders")
                                                      : tr("; accuracy %1 % on the %2 rows labelled in the table"))
                          .arg(100.0 * r.accuracy(), 0, 'f', 1)
                          .arg(r.labelled);
                const bool noneRead = r.skipped > 0 && r.skipped == static_cast<int64_t>(r.rows.size());
                if (noneRead)  // the same reason for every row, as the CLI says it (five crops of small images)
                  text = tr("%1: none of the %2 inputs predicted: %3")
                             .arg(QString::fromStdString(r.model))
                             .arg(r.skipped)
                             .arg(QString::fromStdString(r.rows.front().error));
                else if (r.skipped > 0)
                  text += tr("; %1 skipped (the Problem column says why)").arg(r.skipped);
                if (!r.note.empty()) text += " (" + QString::fromStdString(r.note) + ")";
                setStatus(text, noneRead);
                Q_EMIT predicted(static_cast<int>(r.rows.size()));
              });
}

void PredictPanel::fillTable() {
  const auto& r = *m_report;
  const bool values = !r.targets.empty();               // a regression's or a multi-label model's
  const bool labels = values && !r.thresholds.empty();  // multi-label
  const size_t width = r.targets.size();
  m_table->setSortingEnabled(false);
  m_table->clearContents();
  m_table->setRowCount(static_cast<int>(r.rows.size()));
  m_table->setHorizontalHeaderLabels({tr("File or row"), tr("Predicted"),
                                      labels   ? tr("Most probable")
                                      : values ? tr("Value")
                                               : tr("Confidence"),
                                      labels   ? tr("Labels by probability")
                                      : values ? tr("Targets")
                                               : tr("Top 5"),
                                      tr("Label"), tr("Problem")});
  m_table->setColumnHidden(Label, values);  // a known label is a classifier's
  auto name = [&](int64_t c) { return QString::fromStdString(r.classes[static_cast<size_t>(c)]); };
  for (size_t i = 0; i < r.rows.size(); ++i) {
    const auto& row = r.rows[i];
    const int k = static_cast<int>(i);
    const QString source = QString::fromStdString(row.source);
    auto* item = new QTableWidgetItem(r.input == PredictInput::image ? QFileInfo(source).fileName() : source);
    item->setToolTip(source);
    item->setData(kRowRole, k);
    m_table->setItem(k, Source, item);
    QString predicted;
    QStringList in, top;
    double figure = -1;  // sorts the rows: the confidence, the most probable label's, or the first target's value
    if (!row.error.empty()) {
      // skipped: its reason is in the Problem column
    } else if (!values) {
      if (!row.top.empty()) in << name(row.top[0]);
      predicted = in.value(0);
      figure = row.probability.empty() ? -1.0 : static_cast<double>(row.probability[0]);
      for (size_t j = 0; j < row.top.size(); ++j)
        top << QString("%1 %2").arg(name(row.top[j])).arg(static_cast<double>(row.probability[j]), 0, 'f', 3);
    } else {
      const float* v = r.values.data() + i * width;
      std::vector<size_t> order(width);
      for (size_t j = 0; j < width; ++j) order[j] = j;
      if (labels) std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return v[a] > v[b]; });
      for (size_t j = 0; j < width; ++j) {
        const QString target = QString::fromStdString(r.targets[j]);
        if (labels && static_cast<double>(v[j]) >= r.thresholds[j]) in << target;
      }
      for (size_t j = 0; j < std::min<size_t>(labels ? kBars : width, width); ++j)
        top << QString("%1 %2")
                   .arg(QString::fromStdString(r.targets[order[j]]))
                   .arg(static_cast<double>(v[order[j]]), 0, 'g', labels ? 3 : 6);
      figure = static_cast<double>(v[order[0]]);
      predicted = labels ? in.join(QString::fromStdString(r.tagSeparator))
                         : (width == 1 ? QString::number(figure, 'g', 6) : top.join(" · "));
    }
    auto* predictedItem = new QTableWidgetItem(predicted);
    predictedItem->setData(kInRole, in);
    m_table->setItem(k, Predicted, predictedItem);
    const QString figureText = figure < 0 && !(values && !labels) ? QString()
                               : values && !labels                ? QString::number(figure, 'g', 6)
                                                                  : QString("%1 %").arg(100 * figure, 0, 'f', 1);
    m_table->setItem(k, Confidence,
                     new NumberItem(row.error.empty() ? figure : -1e300, row.error.empty() ? figureText : QString()));
    m_table->setItem(k, TopK, new QTableWidgetItem(top.join(" · ")));
    m_table->setItem(k, Label, new QTableWidgetItem(row.label >= 0 && !values ? name(row.label) : QString()));
    m_table->setItem(k, Problem, new QTableWidgetItem(QString::fromStdString(row.error)));
  }
  m_table->setSortingEnabled(true);
  m_table->sortByColumn(Confidence, Qt::DescendingOrder);
  const QString keep = m_filter->currentData().toString();
  m_filter->blockSignals(true);
  m_filter->clear();
  m_filter->addItem(values && !labels ? tr("All rows") : labels ? tr("All labels") : tr("All classes"), QString());
  if (!values || labels)
    for (const auto& c : values ? r.targets : r.classes)
      m_filter->addItem(QString::fromStdString(c), QString::fromStdString(c));
  m_filter->setEnabled(m_filter->count() > 1);
  m_filter->setCurrentIndex(std::max(0, m_filter->findData(keep)));
  m_filter->blockSignals(false);
  setClassFilter(m_filter->currentData().toString());
  // Test-time augmentation averages an image classifier's probabilities; Grad-CAM looks at images.
  m_tta->setEnabled(r.input == PredictInput::image && !values);
  m_opacityRow->setVisible(r.input == PredictInput::image);
  m_save->setEnabled(true);
  if (m_table->rowCount() > 0) m_table->selectRow(0);
}

void PredictPanel::setClassFilter(const QString& className) {
  if (m_filter->currentData().toString() != className) {
    const int i = m_filter->findData(className);
    if (i >= 0) {
      m_filter->setCurrentIndex(i);  // comes back here through the signal
      return;
    }
  }
  for (int i = 0; i < m_table->rowCount(); ++i)
    m_table->setRowHidden(
        i, !className.isEmpty() && !m_table->item(i, Predicted)->data(kInRole).toStringList().contains(className));
}

int PredictPanel::visibleRows() const {
  int n = 0;
  for (int i = 0; i < m_table->rowCount(); ++i) n += !m_table->isRowHidden(i);
  return n;
}

bool PredictPanel::saveCsv(const QString& path, QString* error) {
  if (!m_report) {
    if (error) *error = tr("Nothing predicted yet to save");
    return false;
  }
  try {
    writePredictionsCsv(*m_report, path.toStdString());
  } catch (const std::exception& e) {
    if (error) *error = tr("Cannot save the predictions: %1").arg(QString::fromStdString(e.what()));
    return false;
  }
  setStatus(tr("Saved %1 predictions to %2").arg(m_report->rows.size()).arg(path));
  return true;
}

QString PredictPanel::statusText() const { return m_status->text(); }

bool PredictPanel::showsBoxes() const { return m_pages->currentWidget() == m_boxView; }
bool PredictPanel::showsMasks() const { return m_pages->currentWidget() == m_maskView; }
QString PredictPanel::explanation() const { return m_camNote->text(); }

void PredictPanel::setStatus(const QString& text, bool error) {
  m_status->setText(text);
  m_status->setStyleSheet(error ? "color: #c0392b;" : QString());
  Q_EMIT message(text, error);
}

void PredictPanel::showSelected() {
  const auto selected = m_table->selectedItems();
  if (!m_report || selected.isEmpty()) return;
  const int k = m_table->item(selected.front()->row(), Source)->data(kRowRole).toInt();
  const auto& row = m_report->rows[static_cast<size_t>(k)];
  // The bars: a classifier's top classes, or a multi-label model's most probable labels (a regression has none).
  std::vector<std::pair<std::string, float>> bars;
  if (m_report->targets.empty()) {
    for (size_t j = 0; j < row.top.size(); ++j)
      bars.emplace_back(m_report->classes[static_cast<size_t>(row.top[j])], row.probability[j]);
  } else if (!m_report->thresholds.empty() && row.error.empty()) {
    const size_t width = m_report->targets.size();
    for (size_t j = 0; j < width; ++j)
      bars.emplace_back(m_report->targets[j], m_report->values[static_cast<size_t>(k) * width + j]);
    std::stable_sort(bars.begin(), bars.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  }
  for (size_t j = 0; j < m_bars.size(); ++j) {
    auto [name, bar] = m_bars[j];
    const bool shown = j < bars.size();
    name->setVisible(shown);
    bar->setVisible(shown);
    if (!shown) continue;
    name->setText(QString::fromStdString(bars[j].first));
    bar->setValue(static_cast<int>(std::lround(1000.0 * static_cast<double>(bars[j].second))));
    bar->setFormat(QString("%1 %").arg(100.0 * static_cast<double>(bars[j].second), 0, 'f', 1));
  }
  m_cam.reset();
  m_attribution.reset();
  m_shown = QImage();
  m_preview->clear();
  if (!row.error.empty()) {
    m_camNote->setText(QString::fromStdString(row.error));
    return;
  }
  m_camBusy = true;
  if (m_report->input != PredictInput::image) {
    const auto width = m_report->features.size() / std::max<size_t>(1, m_report->rows.size());
    const std::vector<float> features(m_report->features.begin() + static_cast<std::ptrdiff_t>(k * width),
                                      m_report->features.begin() + static_cast<std::ptrdiff_t>((k + 1) * width));
    m_camNote->setText(tr("Weighing the features…"));
    m_camJob.start(onModel([features](Predictor& p, Outcome& out) { out.attribution = p.attributions(features); }),
                   [this](const Outcome& out) {
                     m_camBusy = false;
                     m_attribution = out.attribution;
                     if (!out.attribution) {
                       m_camNote->setText(out.error);
                       return;
                     }
                     // The features that moved the logit most, either way.
                     const auto& a = *out.attribution;
                     std::vector<size_t> order(a.values.size());
                     for (size_t i = 0; i < order.size(); ++i) order[i] = i;
                     std::sort(order.begin(), order.end(),
                               [&](size_t x, size_t y) { return std::fabs(a.values[x]) > std::fabs(a.values[y]); });
                     QStringList lines;
                     for (size_t i = 0; i < std::min<size_t>(8, order.size()); ++i)
                       lines << QString("%1  %2")
                                    .arg(QString::fromStdString(a.features[order[i]]))
                                    .arg(static_cast<double>(a.values[order[i]]), 0, 'g', 3);
                     m_camNote->setText(tr("What weighed most for %1 (gradient × input):\n%2")
                                            .arg(QString::fromStdString(a.output), lines.join("\n")));
                   });
    return;
  }
  m_camNote->setText(tr("Computing Grad-CAM…"));
  m_camJob.start(onModel([file = row.source](Predictor& p, Outcome& out) { out.cam = p.gradCam(file); }),
                 [this](const Outcome& out) {
                   m_camBusy = false;
                   m_cam = out.cam;
                   m_camNote->setText(out.cam ? tr("Where the last convolutional stage (layer %1) looked for %2")
                                                    .arg(QString::fromStdString(out.cam->layer))
                                                    .arg(QString::fromStdString(out.cam->output))
                                              : out.error);
                   drawPreview();
                 });
}

void PredictPanel::drawPreview() {
  if (!m_cam) return;
  const GradCamMap& c = *m_cam;
  const auto w = static_cast<int>(c.width), h = static_cast<int>(c.height);
  QImage img(w, h, QImage::Format_RGB32);
  const double a = m_opacity->value() / 100.0;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const size_t p = static_cast<size_t>(y * w + x);
      const uint8_t* px = c.image.data() + p * static_cast<size_t>(c.channels);
      const int r0 = px[0], g0 = c.channels == 3 ? px[1] : px[0], b0 = c.channels == 3 ? px[2] : px[0];
      const QColor heat = heatColour(c.heat[p]);
      auto mix = [a](int base, int over) { return static_cast<int>(std::lround(base * (1 - a) + over * a)); };
      img.setPixel(x, y, qRgb(mix(r0, heat.red()), mix(g0, heat.green()), mix(b0, heat.blue())));
    }
  m_shown = img;
  const int side = std::max(96, std::min(m_preview->width(), m_preview->height()));
  m_preview->setPixmap(QPixmap::fromImage(img.scaled(side, side, Qt::KeepAspectRatio, Qt::SmoothTransformation)));
}

void PredictPanel::dragEnterEvent(QDragEnterEvent* event) {
  if (event->mimeData()->hasUrls()) event->acceptProposedAction();
}

void PredictPanel::dropEvent(QDropEvent* event) {
  QStringList paths;
  for (const QUrl& url : event->mimeData()->urls())
    if (url.isLocalFile()) paths << url.toLocalFile();
  if (paths.isEmpty()) return;
  event->acceptProposedAction();
  predictPaths(paths);
}

}  // namespace studio::ui
