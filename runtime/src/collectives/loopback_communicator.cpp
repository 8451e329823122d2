// The loopback communicator: a group of one rank, for jobs of one process (no
// MPI, no NCCL) and for unit tests, as XLA's loopback communicator. With one
// rank every reduction of a value is the value (AVG divides by 1), so each
// collective is a copy on the rank's device; sends wait in a queue for the
// recv that takes them.
#include <fmt/format.h>

#include <deque>
#include <mutex>
#include <vector>

#include "../runtime_internal.h"
#include "communicator.h"

namespace tessera::rt {
namespace {

class LoopbackCommunicator : public Communicator {
 public:
  explicit LoopbackCommunicator(tessDevice device) : device_(device) {}

  tessCollectiveBackend backend() const override { return TESS_COLLECTIVES_LOOPBACK; }
  int rank() const override { return 0; }
  int size() const override { return 1; }

  tessStatus all_reduce(const CollectiveCall& call, const void* send, void* recv, size_t count, tessDtype dtype,
                        tessReduceOp, tessStream) override {
    return copy(call, recv, send, count * static_cast<size_t>(tessDtypeBits(dtype)) / 8);
  }
  tessStatus reduce_scatter(const CollectiveCall& call, const void* send, void* recv, size_t count, tessDtype dtype,
                            tessReduceOp, tessStream) override {
    return copy(call, recv, send, count * static_cast<size_t>(tessDtypeBits(dtype)) / 8);
  }
  tessStatus all_gather(const CollectiveCall& call, const void* send, void* recv, size_t bytes, tessStream) override {
    return copy(call, recv, send, bytes);
  }
  tessStatus broadcast(const CollectiveCall&, void*, size_t, int, tessStream) override { return ok(); }

  tessStatus send(const CollectiveCall& call, const void* buffer, size_t bytes, int, tessStream) override {
    std::vector<unsigned char> message(bytes);
    if (auto s = device_->copy_to_host(message.data(), address(buffer), bytes); s)
      return collective_failure(call, backend(), s, last_error_message());
    std::lock_guard lock(mutex_);
    queue_.push_back(std::move(message));
    return ok();
  }
  tessStatus recv(const CollectiveCall& call, void* buffer, size_t bytes, int, tessStream) override {
    std::vector<unsigned char> message;
    {
      std::lock_guard lock(mutex_);
      if (queue_.empty())
        return collective_failure(call, backend(), TESS_ERROR_INVALID_VALUE,
                                  "no message was sent: with one rank, a recv must follow its send");
      if (queue_.front().size() != bytes)
        return collective_failure(call, backend(), TESS_ERROR_INVALID_VALUE,
                                  fmt::format("the next message has {} bytes, the recv expects {}",
                                              queue_.front().size(), bytes));
      message = std::move(queue_.front());
      queue_.pop_front();
    }
    if (auto s = device_->copy_to_device(address(buffer), message.data(), bytes); s)
      return collective_failure(call, backend(), s, last_error_message());
    return ok();
  }
  // Both peers are this rank: the message is the send buffer.
  tessStatus send_recv(const CollectiveCall& call, const void* send, int, void* recv, int, size_t bytes,
                       tessStream) override {
    return copy(call, recv, send, bytes);
  }
  tessStatus barrier(const CollectiveCall&) override { return ok(); }

  tessStatus split(const CollectiveCall&, int color, int, std::unique_ptr<Communicator>* result) override {
    *result = color < 0 ? nullptr : make_loopback_communicator(device_);
    return ok();
  }

 private:
  static tessDevicePtr address(const void* p) { return reinterpret_cast<tessDevicePtr>(p); }

  tessStatus copy(const CollectiveCall& call, void* dst, const void* src, size_t bytes) {
    if (dst == src || bytes == 0) return ok();
    if (auto s = device_->copy_on_device(address(dst), address(src), bytes); s)
      return collective_failure(call, backend(), s, last_error_message());
    return ok();
  }

  tessDevice device_;
  std::mutex mutex_;
  std::deque<std::vector<unsigned char>> queue_;
};

}  // namespace

std::unique_ptr<Communicator> make_loopback_communicator(tessDevice device) {
  return std::make_unique<LoopbackCommunicator>(device);
}

}  // namespace tessera::rt
