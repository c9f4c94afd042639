#pragma once
// What the Evaluation tab's test-image views share (a detector's boxes,
// test_boxes_view.h; a segmenter's masks, test_masks_view.h): a button that
// runs the run's model on its test split's images off the UI thread, a line
// that says what was found, a table of the images worst first, and the
// selected image drawn twice side by side (the truth, what was found).
// A view adds its columns, its job and its drawing.
// Thread: the UI thread.

#include <QImage>
#include <QString>
#include <QStringList>
#include <QWidget>

class QHBoxLayout;
class QLabel;
class QPushButton;
class QTableWidget;

namespace studio::ui {

class TestImagesView : public QWidget {
  Q_OBJECT

 public:
  // name: the object names' stem ("testBoxes": testBoxesTable, ...; the
  // button findTestBoxes); the button's text and tip; the line's first
  // words; the table's headers.
  TestImagesView(const QString& name, const QString& button, const QString& tip, const QString& status,
                 const QStringList& headers, QWidget* parent = nullptr);
  // The run whose test images are shown (nothing found until asked).
  void setRun(const QString& runDir);
  bool busy() const { return m_busy; }
  QTableWidget* table() const { return m_images; }  // worst first
  QImage shownImage() const { return m_shown; }
  QString statusText() const;

 Q_SIGNALS:
  void found(int images);

 protected:
  // Runs the view's job (the button): false when there is no run or one is under way.
  bool startFinding(const QString& saying);
  // The job's end: nothing found (the line says why), or `rows` images.
  void finishFinding(bool ok, const QString& error, int rows);
  // The two pictures side by side, 8 pixels apart, and their tooltip.
  void showBoth(const QImage& left, const QImage& right, const QString& tip);
  // Says why the selected image cannot be drawn.
  void showNothing(const QString& why);
  // The table row's index into the view's results (kept in its first column), or -1.
  int selectedResult() const;
  virtual void forgetFound() = 0;  // setRun: the last run's results dropped
  virtual void showSelected() = 0;

  static constexpr int kRowRole = Qt::UserRole + 1;  // the first column's index into the results
  static constexpr int kSide = 280;                  // each of the two pictures
  QString m_run;
  QHBoxLayout* m_top = nullptr;  // the button's row: a view's own controls go after it
  QLabel* m_status = nullptr;
  QTableWidget* m_images = nullptr;

 private:
  QPushButton* m_find = nullptr;
  QLabel* m_picture = nullptr;
  QImage m_shown;
  bool m_busy = false;
};

}  // namespace studio::ui
