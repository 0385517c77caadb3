#pragma once
// ThreadCrew: a fixed set of threads that each run the same piece of work at once, for code that must do
// its work on threads of its own and wait for all of it: bench's client threads (bench --client-threads,
// a copy of a strategy per thread) and blocking_sockets with N requests in flight (a worker per
// connection). The one implementation of that hand-over: a generation counter, a condition variable
// that wakes every thread, and a count of the threads still working, under one mutex.
//
// Ownership and lifetime: the crew owns its threads; they start in the constructor and wait; the
// destructor stops and joins them (it must not run while on_every_thread() does). Whatever a piece of
// work touches must outlive the on_every_thread() call that runs it, which returns only when every
// thread is done with it.
//
// Threads: on_every_thread() is called by one thread at a time (the owner's), never from a crew thread.
// Each crew thread runs its share, then reports done under the mutex, so what it wrote is visible to the
// caller when on_every_thread() returns (and what the caller wrote before the call is visible to it).
// Errors: a thread that cannot be started throws std::system_error from the constructor (as std::thread
// does), after the threads already started are stopped and joined. Work must not throw (it runs on a
// thread of its own, where an exception would end the program): callers hand errors back as values.
// Allocation: none per on_every_thread() call.
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

namespace ringlab::base {

class ThreadCrew {
 public:
  explicit ThreadCrew(std::size_t threads);
  ~ThreadCrew();
  ThreadCrew(const ThreadCrew&) = delete;
  ThreadCrew& operator=(const ThreadCrew&) = delete;

  [[nodiscard]] std::size_t size() const noexcept { return threads_.size(); }

  // work(i) on every crew thread i at once; returns when all are done.
  template <class F>
  void on_every_thread(F&& work) {
    using Work = std::remove_reference_t<F>;
    const Job job{.run = [](void* context, std::size_t thread) { (*static_cast<Work*>(context))(thread); },
                  .context = static_cast<void*>(&work)};
    execute(job);
  }

 private:
  // Work given to every thread at once: run(context, i) is called on thread i.
  struct Job {
    void (*run)(void* context, std::size_t thread) = nullptr;
    void* context = nullptr;
  };
  void execute(const Job& job);
  void thread_main(std::size_t thread);
  void stop() noexcept;

  std::mutex mutex_;
  std::condition_variable wake_;  // a new job (generation_ moved) or stopping_
  std::condition_variable done_;  // pending_ reached 0
  const Job* job_ = nullptr;
  uint64_t generation_ = 0;
  std::size_t pending_ = 0;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace ringlab::base
