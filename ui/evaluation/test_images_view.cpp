#include "ui/evaluation/test_images_view.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPainter>
#include <QPushButton>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>

#include <algorithm>

namespace studio::ui {

TestImagesView::TestImagesView(const QString& name, const QString& button, const QString& tip, const QString& status,
                               const QStringList& headers, QWidget* parent)
    : QWidget(parent) {
  setObjectName(name + "View");
  m_find = new QPushButton(button);
  m_find->setObjectName("find" + name.left(1).toUpper() + name.mid(1));
  m_find->setToolTip(tip);
  m_find->setEnabled(false);
  m_status = new QLabel(status);
  m_status->setWordWrap(true);
  m_images = new QTableWidget(0, static_cast<int>(headers.size()));
  m_images->setObjectName(name + "Table");
  m_images->setHorizontalHeaderLabels(headers);
  m_images->setEditTriggers(QAbstractItemView::NoEditTriggers);
  m_images->setSelectionBehavior(QAbstractItemView::SelectRows);
  m_images->setSelectionMode(QAbstractItemView::SingleSelection);
  m_images->verticalHeader()->hide();
  m_images->horizontalHeader()->setStretchLastSection(true);
  m_images->setMinimumHeight(160);
  m_picture = new QLabel;
  m_picture->setObjectName(name + "Picture");
  m_picture->setAlignment(Qt::AlignCenter);
  m_picture->setMinimumSize(2 * kSide / 3, kSide / 3);

  m_top = new QHBoxLayout;
  m_top->addWidget(m_find);
  auto* split = new QSplitter(Qt::Horizontal);
  split->addWidget(m_images);
  split->addWidget(m_picture);
  split->setStretchFactor(1, 2);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addLayout(m_top);
  layout->addWidget(m_status);
  layout->addWidget(split, 1);
  connect(m_images, &QTableWidget::itemSelectionChanged, this, [this] { showSelected(); });
}

QString TestImagesView::statusText() const { return m_status->text(); }

void TestImagesView::setRun(const QString& runDir) {
  if (runDir == m_run) return;
  m_run = runDir;
  forgetFound();
  m_images->setRowCount(0);
  m_picture->clear();
  m_shown = QImage();
  m_find->setEnabled(!runDir.isEmpty() && !m_busy);
}

bool TestImagesView::startFinding(const QString& saying) {
  if (m_run.isEmpty() || m_busy) return false;
  m_busy = true;
  m_find->setEnabled(false);
  m_status->setText(saying);
  return true;
}

void TestImagesView::finishFinding(bool ok, const QString& error, int rows) {
  m_busy = false;
  m_find->setEnabled(!m_run.isEmpty());
  if (!ok) {
    m_status->setText(error);
    Q_EMIT found(0);
    return;
  }
  if (m_images->rowCount() > 0) m_images->selectRow(0);
  Q_EMIT found(rows);
}

void TestImagesView::showBoth(const QImage& left, const QImage& right, const QString& tip) {
  QImage both(left.width() + 8 + right.width(), std::max(left.height(), right.height()), QImage::Format_RGB32);
  both.fill(palette().color(QPalette::Window));
  QPainter paint(&both);
  paint.drawImage(0, 0, left);
  paint.drawImage(left.width() + 8, 0, right);
  paint.end();
  m_shown = both;
  m_picture->setPixmap(QPixmap::fromImage(both));
  m_picture->setToolTip(tip);
}

void TestImagesView::showNothing(const QString& why) {
  m_shown = QImage();
  m_picture->clear();
  if (!why.isEmpty()) m_picture->setText(why);
}

int TestImagesView::selectedResult() const {
  const int r = m_images->currentRow();
  if (r < 0 || !m_images->item(r, 0)) return -1;
  return m_images->item(r, 0)->data(kRowRole).toInt();
}

}  // namespace studio::ui
