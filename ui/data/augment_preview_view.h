#pragma once
// The Data tab's augmentation preview: a few training images, each drawn
// several times through the training augmentations the settings choose
// (studio/augment_preview.h), redrawn when those settings change.
// Thread: UI thread.

#include <QImage>
#include <QWidget>

#include <vector>

class QGridLayout;
class QLabel;

namespace studio::ui {

class AugmentPreviewView : public QWidget {
  Q_OBJECT

 public:
  explicit AugmentPreviewView(QWidget* parent = nullptr);
  // A row per image: its draws. `note` says what is on ("flip, resized crop").
  void showDraws(const std::vector<std::vector<QImage>>& rows, const QString& note);
  void showNothing(const QString& why);
  int imageCount() const { return m_count; }
  QString note() const;

 private:
  QLabel* m_title;
  QWidget* m_host;
  QGridLayout* m_grid;
  int m_count = 0;
};

}  // namespace studio::ui
