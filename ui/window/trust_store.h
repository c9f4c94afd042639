#pragma once
// The TorchScript files the person trusted to run (their SHA-256), kept in
// QSettings when the window persists its state, and the question asked
// before a file not trusted yet is loaded (its code runs with the person's
// permissions).
// Thread: the UI thread.

#include <QObject>
#include <QSet>
#include <QString>

#include <functional>

#include "studio/train_config.h"

class QWidget;

namespace studio::ui {

class TrustStore : public QObject {
  Q_OBJECT

 public:
  // Asked about a file not trusted yet: true to go on.
  using Prompt = std::function<bool(const QString& path, const QString& sha256)>;
  // persist: read and write the trusted hashes in QSettings. The default
  // prompt is a dialog over `dialogParent`, No the default.
  TrustStore(bool persist, QWidget* dialogParent);

  void setPrompt(Prompt prompt) { m_prompt = std::move(prompt); }
  bool contains(const QString& sha256) const { return m_trusted.contains(sha256); }
  void trust(const QString& sha256);
  // Before a start with these settings: true when their model is no
  // TorchScript file, or one trusted now or before. False with `why`
  // (a file that cannot be read, or not trusted).
  bool ensure(const TrainConfig& config, QString* why);
  // The same for a run folder's settings (true when they are unreadable:
  // the session then says why).
  bool ensureRunFolder(const QString& runDir, QString* why);
  // The Model tab's "Trust this file": asks unless trusted already; false
  // with `why` when the file cannot be read.
  bool askFor(const QString& path, QString* why);

 Q_SIGNALS:
  // A file was trusted (at Start, or from the Model tab): what shows it can
  // show it now.
  void trusted(const QString& sha256);

 private:
  bool m_persist;
  QSet<QString> m_trusted;
  Prompt m_prompt;
};

}  // namespace studio::ui
