#pragma once
// Precompiled header for the engine's torch files: the torch sub-headers the
// engine uses, not <torch/torch.h>, to keep each compile short.
#include <ATen/ATen.h>
#include <ATen/autocast_mode.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/pooling.h>
#include <torch/serialize/archive.h>
#include <torch/types.h>
#include <torch/utils.h>
