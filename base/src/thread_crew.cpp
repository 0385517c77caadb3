#include "ringlab/base/thread_crew.hpp"

namespace ringlab::base {

ThreadCrew::ThreadCrew(std::size_t threads) {
  threads_.reserve(threads);
  try {
    for (std::size_t i = 0; i < threads; ++i) threads_.emplace_back([this, i] { thread_main(i); });
  } catch (...) {
    stop();
    throw;
  }
}

ThreadCrew::~ThreadCrew() { stop(); }

void ThreadCrew::stop() noexcept {
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (std::thread& thread : threads_) thread.join();
  threads_.clear();
}

void ThreadCrew::thread_main(std::size_t thread) {
  // Generation 0 is the one before any job: a thread that starts after the first job was given still
  // runs it (and the next job waits for every thread to finish this one).
  uint64_t seen = 0;
  for (;;) {
    const Job* job = nullptr;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || generation_ != seen; });
      if (stopping_) return;
      seen = generation_;
      job = job_;
    }
    job->run(job->context, thread);
    const std::lock_guard lock(mutex_);
    if (--pending_ == 0) done_.notify_one();
  }
}

void ThreadCrew::execute(const Job& job) {
  std::unique_lock lock(mutex_);
  if (threads_.empty()) return;
  job_ = &job;
  pending_ = threads_.size();
  ++generation_;
  wake_.notify_all();
  done_.wait(lock, [this] { return pending_ == 0; });
  job_ = nullptr;
}

}  // namespace ringlab::base
