#include "ui/data/augment_preview_view.h"

#include <QGridLayout>
#include <QLabel>
#include <QLayoutItem>
#include <QPixmap>
#include <QVBoxLayout>

namespace studio::ui {

AugmentPreviewView::AugmentPreviewView(QWidget* parent) : QWidget(parent) {
  setObjectName("augmentPreview");
  auto* top = new QVBoxLayout(this);
  top->setContentsMargins(0, 0, 0, 0);
  m_title = new QLabel;
  m_title->setObjectName("augmentPreviewTitle");
  m_title->setWordWrap(true);
  top->addWidget(m_title);
  m_host = new QWidget;
  m_grid = new QGridLayout(m_host);
  m_grid->setContentsMargins(0, 0, 0, 0);
  m_grid->setAlignment(Qt::AlignTop | Qt::AlignLeft);
  top->addWidget(m_host);
}

QString AugmentPreviewView::note() const { return m_title->text(); }

void AugmentPreviewView::showNothing(const QString& why) {
  while (QLayoutItem* item = m_grid->takeAt(0)) {
    delete item->widget();
    delete item;
  }
  m_count = 0;
  m_title->setText(why);
}

void AugmentPreviewView::showDraws(const std::vector<std::vector<QImage>>& rows, const QString& note) {
  showNothing(tr("<b>Augmentation preview</b> (each image drawn %1 times): %2")
                  .arg(rows.empty() ? 0 : static_cast<int>(rows.front().size()))
                  .arg(note.toHtmlEscaped()));
  for (size_t r = 0; r < rows.size(); ++r) {
    for (size_t k = 0; k < rows[r].size(); ++k) {
      auto* cell = new QLabel;
      cell->setFixedSize(72, 72);
      cell->setAlignment(Qt::AlignCenter);
      cell->setPixmap(QPixmap::fromImage(rows[r][k]).scaled(72, 72, Qt::KeepAspectRatio, Qt::SmoothTransformation));
      m_grid->addWidget(cell, static_cast<int>(r), static_cast<int>(k));
      ++m_count;
    }
  }
}

}  // namespace studio::ui
