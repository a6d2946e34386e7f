// paths: what names the same file system object, whatever string reaches it.
//
// Problem: two paths that differ as strings may name one directory (a
// symlink on the way, a bind mount, `..`), and a directory given as an out
// path often does not exist yet when it is compared.
//
// Design: a directory's identity is its device and inode number, taken from
// the nearest part of the path that exists (symlinks followed), followed by
// the normalized names below it that do not exist yet. Two paths whose
// identities are equal, taken at the same moment, name the same place.
#pragma once

#include <string>

namespace proofline::base {

/// The identity of `path` (absolute, or relative to the working directory):
/// "dev:ino" of its longest existing prefix, then "/name" for each part
/// below it not yet created. When a prefix cannot be examined (no
/// permission), the normalized absolute path itself.
std::string path_identity(const std::string& path);

}  // namespace proofline::base
