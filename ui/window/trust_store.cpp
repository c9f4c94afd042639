#include "ui/window/trust_store.h"

#include <QMessageBox>
#include <QSettings>
#include <QStringList>
#include <QWidget>

#include "studio/model_kinds.h"
#include "studio/run_layout.h"
#include "studio/sha256.h"

namespace studio::ui {

TrustStore::TrustStore(bool persist, QWidget* dialogParent) : QObject(dialogParent), m_persist(persist) {
  m_prompt = [dialogParent](const QString& path, const QString& sha) {
    return QMessageBox::warning(dialogParent, tr("Run the code in a TorchScript file?"),
                                tr("%1 is a TorchScript model. Loading it runs the code in it, with your "
                                   "permissions: only go on with files you trust.\n\nSHA-256 %2\n\nTrain with it?")
                                    .arg(path, sha),
                                QMessageBox::Yes | QMessageBox::No, QMessageBox::No) == QMessageBox::Yes;
  };
  if (m_persist)
    for (const QString& sha : QSettings().value("trust/torchscript").toStringList()) m_trusted.insert(sha);
}

void TrustStore::trust(const QString& sha256) {
  m_trusted.insert(sha256);
  if (m_persist) QSettings().setValue("trust/torchscript", QStringList(m_trusted.begin(), m_trusted.end()));
  Q_EMIT trusted(sha256);
}

bool TrustStore::ensure(const TrainConfig& c, QString* why) {
  if (!isModel(c.model.kind, ModelFamily::torchscript)) return true;
  QString sha;
  try {
    sha = QString::fromStdString(sha256OfFile(c.model.path));
  } catch (const std::exception& e) {
    *why = tr("Cannot start: %1").arg(QString::fromStdString(e.what()));
    return false;
  }
  if (m_trusted.contains(sha)) return true;
  if (!m_prompt(QString::fromStdString(c.model.path), sha)) {
    *why = tr("Not started: %1 was not trusted to run").arg(QString::fromStdString(c.model.path));
    return false;
  }
  trust(sha);
  return true;
}

bool TrustStore::ensureRunFolder(const QString& runDir, QString* why) {
  TrainConfig config;
  try {
    config = loadConfigFile((runDir + "/" + run_files::kSettings).toStdString());
  } catch (const std::exception&) {
    return true;  // the session names what is wrong with the folder
  }
  return ensure(config, why);
}

bool TrustStore::askFor(const QString& path, QString* why) {
  try {
    const QString sha = QString::fromStdString(sha256OfFile(path.toStdString()));
    if (m_trusted.contains(sha) || m_prompt(path, sha)) trust(sha);
  } catch (const std::exception& e) {
    *why = QString::fromStdString(e.what());
    return false;
  }
  return true;
}

}  // namespace studio::ui
