#pragma once
// The Label tab (issue 62): a folder of images, labelled a class each (a
// CSV labels file) or with boxes (a COCO JSON), keyboard first as labellers
// work. Classes: the number keys give the class of the chosen image and
// move to the next, Delete clears, Return (or A) accepts the model's
// proposal. Boxes (BoxCanvas): a drag draws a box of the current class,
// moves or resizes one; the number keys set the selected box's class (and
// the next box's), Delete removes the selected box, Return accepts the
// proposed boxes and marks the image done (no boxes: nothing to find).
// Both: the arrow keys move, Z and Shift+Z undo and redo, + and - zoom. Thumbnails beside the large view; a filter
// (all, unlabelled, labelled, proposed); the classes with their counts,
// added, renamed or merged. A run proposes classes for the images
// (label --prelabel's) and orders them by what teaches it most (label
// --suggest's); "Train on these labels" points the settings at the folder
// and its labels file. Every change is on the disk before the next key is
// read (LabelSession, LabelStore).
// Thread: UI thread.

#include <QImage>
#include <QMap>
#include <QWidget>

#include <functional>
#include <memory>
#include <vector>

#include "studio/box_label_store.h"
#include "ui/common/background_job.h"

class QComboBox;
class QLabel;
class QListWidget;
class QListWidgetItem;
class QPushButton;
class QScrollArea;

namespace studio::ui {

class BoxCanvas;
class BoxSession;
class LabelEditor;
class LabelSession;

class LabelPanel : public QWidget {
  Q_OBJECT

 public:
  explicit LabelPanel(QWidget* parent = nullptr);
  ~LabelPanel() override;

  // Opens folder's images with labelsFile (empty: folder/labels.csv for
  // classes, folder/boxes.json for boxes, as the kind chosen says); a .json
  // file holds boxes. False, said, when it cannot (another window holds the
  // file, a bad row, no images).
  bool open(const QString& folder, const QString& labelsFile = {});
  // The run whose classifier proposes (or orders), on a thread of its own.
  void proposeWith(const QString& runDir);
  void orderBy(const QString& runDir);
  // An audit's flagged labels (audit_panel.h's reviewLabels): the folder and
  // labels file opened, its flagged images shown with the suggestion
  // proposed; false, said, when it cannot be opened.
  bool review(const QString& folder, const QString& labelsFile, const QMap<QString, QString>& suggested);
  bool busy() const { return m_busy; }
  // Where "Propose…" and "Order…" find a run: the Runs dock's selection.
  void setRunChooser(std::function<QString()> chooser) { m_runChooser = std::move(chooser); }

  LabelEditor* editor() const { return m_editor.get(); }
  LabelSession* session() const { return m_session; }  // classes; else nullptr
  BoxSession* boxSession() const { return m_boxes; }   // boxes; else nullptr
  BoxCanvas* canvas() const { return m_canvas; }
  QListWidget* thumbnails() const { return m_thumbs; }
  QListWidget* classList() const { return m_classes; }
  QComboBox* filter() const { return m_filter; }
  QString currentImage() const;
  QString summary() const;
  // Another program's edits of the labels file, merged into the tab (a
  // timer calls it every two seconds; true when it merged any).
  bool mergeOutsideEdits();
  double zoom() const { return m_zoom; }

 Q_SIGNALS:
  void message(const QString& text, bool error);
  // "Train on these labels": the folder and its labels file (written whole;
  // a .json file: boxes, for task.kind detection).
  void trainOnLabels(const QString& folder, const QString& labelsFile);

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  void chooseFolder();
  void fillThumbnails(const QStringList& order);
  void refreshItem(QListWidgetItem* item);
  void refreshClasses();
  void refreshAll();
  void applyFilter();
  void showCurrent();
  void fitView();
  void moveBy(int delta);
  void labelCurrent(int classIndex);
  void labelledMoveOn();
  bool boxKey(int key);  // the keys that mean something else for boxes
  void boxesEdited(const ImageBoxes& boxes);
  void showInView(QWidget* view);
  void afterChange(const QStringList& images);
  void addClass();
  void renameClass();
  void train();
  void exportLabels();
  QString chooseRun();
  QListWidgetItem* itemOf(const QString& image) const;
  void setBusy(bool busy, const QString& what = {});

  std::unique_ptr<LabelEditor> m_editor;
  LabelSession* m_session = nullptr;
  BoxSession* m_boxes = nullptr;
  QComboBox* m_kind;
  QLabel* m_where;
  QComboBox* m_filter;
  QPushButton* m_propose;
  QPushButton* m_order;
  QPushButton* m_train;
  QPushButton* m_export;
  QListWidget* m_classes;
  QListWidget* m_thumbs;
  QScrollArea* m_scroll;
  QLabel* m_view;
  BoxCanvas* m_canvas;
  QLabel* m_caption;
  QLabel* m_summary;
  QImage m_image;
  double m_zoom = 1;
  QString m_seen;  // the labels file's time and size when last looked at
  bool m_busy = false;
  std::function<QString()> m_runChooser;
  struct Proposed {
    QString error, run;
    std::vector<std::pair<QString, std::pair<QString, double>>> rows;                  // image, (class, probability)
    std::vector<std::pair<QString, std::vector<std::pair<QString, LabelBox>>>> boxes;  // image, (class, box)
    QStringList classes, order;
  };
  BackgroundJob<std::vector<QImage>> m_thumbJob{this};
  BackgroundJob<Proposed> m_modelJob{this};
};

}  // namespace studio::ui
