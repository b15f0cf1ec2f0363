// Clang thread-safety annotations (-Wthread-safety). They compile to nothing
// elsewhere: GCC builds the same code, Clang checks that every guarded field
// is touched only with its lock held and that locks are taken in order.
// The CI builds the core with `clang++ -Wthread-safety -Werror`.
#pragma once

#if defined(__clang__)
#define CKPTFS_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define CKPTFS_THREAD_ANNOTATION(x)
#endif

#define CAPABILITY(x) CKPTFS_THREAD_ANNOTATION(capability(x))
#define SCOPED_CAPABILITY CKPTFS_THREAD_ANNOTATION(scoped_lockable)
#define GUARDED_BY(x) CKPTFS_THREAD_ANNOTATION(guarded_by(x))
#define PT_GUARDED_BY(x) CKPTFS_THREAD_ANNOTATION(pt_guarded_by(x))
#define ACQUIRED_BEFORE(...) CKPTFS_THREAD_ANNOTATION(acquired_before(__VA_ARGS__))
#define ACQUIRED_AFTER(...) CKPTFS_THREAD_ANNOTATION(acquired_after(__VA_ARGS__))
#define REQUIRES(...) CKPTFS_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define REQUIRES_SHARED(...) CKPTFS_THREAD_ANNOTATION(requires_shared_capability(__VA_ARGS__))
#define ACQUIRE(...) CKPTFS_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define ACQUIRE_SHARED(...) CKPTFS_THREAD_ANNOTATION(acquire_shared_capability(__VA_ARGS__))
#define RELEASE(...) CKPTFS_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define RELEASE_SHARED(...) CKPTFS_THREAD_ANNOTATION(release_shared_capability(__VA_ARGS__))
#define RELEASE_GENERIC(...) CKPTFS_THREAD_ANNOTATION(release_generic_capability(__VA_ARGS__))
#define EXCLUDES(...) CKPTFS_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
#define ASSERT_CAPABILITY(x) CKPTFS_THREAD_ANNOTATION(assert_capability(x))
#define ASSERT_SHARED_CAPABILITY(x) CKPTFS_THREAD_ANNOTATION(assert_shared_capability(x))
#define RETURN_CAPABILITY(x) CKPTFS_THREAD_ANNOTATION(lock_returned(x))
#define NO_THREAD_SAFETY_ANALYSIS CKPTFS_THREAD_ANNOTATION(no_thread_safety_analysis)
