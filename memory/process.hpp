// The process as the kernel sees it: resident memory from /proc and the
// identity of the calling thread, so the memory manager can report peak RSS
// beside its peak reservation and say on which thread each purge ran.
//
//   current_rss()     /proc/self/statm, resident pages × page size (one small read)
//   peak_rss()        VmHWM of /proc/self/status: the kernel's own high-water
//                     mark, so no sampling interval can miss a peak
//   reset_peak_rss()  writes "5" to /proc/self/clear_refs (Linux >= 4.0), so a
//                     test or benchmark can measure the peak of one phase
//   thread_id()       gettid(): the id `top -H` and /proc/self/task show
//   thread_name()     pthread_getname_np; set_thread_name (15 chars at most)
#pragma once

#include <cstdint>
#include <string>

namespace proofline::memory {

/// Resident set size of this process in bytes (0 if /proc is unreadable).
uint64_t current_rss();

/// Peak resident set size of this process in bytes (VmHWM; 0 if unreadable).
uint64_t peak_rss();

/// Resets the kernel's peak RSS to the current RSS; false if not permitted.
bool reset_peak_rss();

/// The calling thread's kernel id.
uint64_t thread_id();

/// The calling thread's name ("" if unknown).
std::string thread_name();

/// Names the calling thread (truncated to the kernel's 15 characters).
void set_thread_name(const std::string& name);

}  // namespace proofline::memory
