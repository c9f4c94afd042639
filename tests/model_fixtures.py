"""Helpers for the suites that compare the studio's torchvision models with torchvision's."""
import torch


def move_batchnorm_statistics(model, batches):
    """Every BatchNorm2d's running statistics moved off their initial values (means in +-0.2, variances in
    0.5 to 1.5, the counter at `batches`), so that loading and using them is tested, not the defaults."""
    with torch.no_grad():
        for mod in model.modules():
            if isinstance(mod, torch.nn.BatchNorm2d):
                mod.running_mean.uniform_(-0.2, 0.2)
                mod.running_var.uniform_(0.5, 1.5)
                mod.num_batches_tracked.fill_(batches)
    return model
