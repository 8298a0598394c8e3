// Tack: one kernel, written once, compiled at its first call for the device it runs on.
#pragma once

#include "tack/algorithms.hpp"
#include "tack/array.hpp"
#include "tack/device.hpp"
#include "tack/dlpack.hpp"
#include "tack/dtype.hpp"
#include "tack/error.hpp"
#include "tack/kernel.hpp"
#include "tack/object.hpp"
#include "tack/runtime.hpp"
#include "tack/texture.hpp"
