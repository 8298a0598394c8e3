// Asynchronous launches: what the runtime knows about work queued on a device.
//
// A backend whose BackendInfo::asynchronous is true returns from launch() once the launch is
// queued (in order, per device). The runtime remembers, per device, which kernels were queued
// since the device last finished, and what must be checked once they have run (a debug-mode
// index record). Everything that lets the host see the results waits first: reading an array,
// tack::sync(), freeing an array, a kernel's `return` value, and a launch that uses memory
// shared with another library. An error from queued work (a device failure, an index violation)
// is raised at that wait, naming the kernel. Synchronous backends (the CPU) never queue.
#pragma once

#include <functional>
#include <string>

namespace tack::detail {

class Backend;

// Notes a launch of `kernel` queued on `device`. `after` (may be empty) runs once the device has
// finished that launch, at the next wait, and may throw the error the launch produced.
void note_queued(Backend* backend, int device, const std::string& kernel,
                 std::function<void()> after);

// Waits until `device` has finished its queued work, then raises the first error it produced
// (a failure remembered from an earlier free counts as well).
void wait_for_device(Backend* backend, int device);

// The wait before memory is freed: it never throws (it runs in destructors); an error is kept
// and raised by the next wait_for_device on that device.
void wait_before_free(Backend* backend, int device) noexcept;

// Waits for every device with queued work (tack::sync()).
void wait_for_all();

}  // namespace tack::detail
