// A semantic segmentation's loss and evaluation counts on the device
// (segmentation/segmentation_loss.h) against torchvision's
// references/segmentation (train.py's criterion, utils.py's
// ConfusionMatrix) on the same seeded float64 logits and targets with
// ignored pixels (issue 61, items 3 and 4): the loss without and with the
// auxiliary logits (0.5 x theirs) within 1e-12, the confusion matrix
// exactly; and the loss's gradient leaves the ignored pixels alone.
// Oracle: tests/reference/segmentation_loss_reference.py (PyTorch).
#include "test_support.h"
#include "torch_test_support.h"

#include <QTemporaryDir>
#include <map>

#include "segmentation/segmentation_loss.h"
#include "tensors/weights_file.h"

using namespace studio;

class TestSegmentationLoss : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void lossAndCountsAreTheReferences() {
    QTemporaryDir dir;
    const QString path = dir.path() + "/loss.safetensors";
    const test::Ran ran = test::python("segmentation_loss_reference.py", {path});
    QVERIFY2(ran.code == 0, qPrintable(ran.output));
    std::map<std::string, torch::Tensor> ref;
    for (const auto& [name, t] : readWeightsFile(path.toStdString())) ref[name] = t;
    SegmenterOutput o{ref.at("out").clone().requires_grad_(true), {}};
    const torch::Tensor loss = segmentationLoss(o, ref.at("target"), 255);
    QVERIFY2(std::fabs(loss.item<double>() - ref.at("loss").item<double>()) <= 1e-12,
             qPrintable(QString("%1 against %2").arg(loss.item<double>()).arg(ref.at("loss").item<double>())));
    o.aux = ref.at("aux");
    const double withAux = segmentationLoss(o, ref.at("target"), 255).item<double>();
    QVERIFY2(std::fabs(withAux - ref.at("loss_aux").item<double>()) <= 1e-12,
             qPrintable(QString("%1 against %2").arg(withAux).arg(ref.at("loss_aux").item<double>())));
    QVERIFY(torch::equal(confusionCounts(ref.at("out"), ref.at("target"), 5), ref.at("matrix")));
    // The ignored pixels get no gradient.
    loss.backward();
    const torch::Tensor ignored = (ref.at("target") == 255).unsqueeze(1).expand_as(o.out);
    QVERIFY(torch::all(o.out.grad().masked_select(ignored) == 0).item<bool>());
    QVERIFY(torch::any(o.out.grad().masked_select(~ignored) != 0).item<bool>());
  }
};

QTEST_GUILESS_MAIN(TestSegmentationLoss)
#include "test_segmentation_loss.moc"
