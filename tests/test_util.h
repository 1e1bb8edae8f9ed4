/** @file
 *  Small helpers shared by the test files.
 */
#pragma once

#include <gtest/gtest.h>

#include "common/status.h"

/// Fails the test (fatally) with the Status message when `expr` is an error.
#define ASSERT_OK(expr)                                        \
  do {                                                         \
    const ::hm::Status hm_test_status_ = (expr);               \
    ASSERT_TRUE(hm_test_status_.ok()) << hm_test_status_.message(); \
  } while (0)

/// Fails the test (fatally) when the CUDA call `expr` fails.
#define ASSERT_CUDA(expr) ASSERT_OK(::hm::cuda_status((expr), #expr, __FILE__, __LINE__))

/// Expects `expr` to be an error whose message contains `needle`.
#define EXPECT_ERROR_CONTAINS(expr, needle)                                             \
  do {                                                                                  \
    const ::hm::Status hm_test_status_ = (expr);                                        \
    EXPECT_FALSE(hm_test_status_.ok()) << "expected an error mentioning '" << (needle) << "'"; \
    EXPECT_NE(hm_test_status_.message().find(needle), std::string::npos)                \
        << "message was: " << hm_test_status_.message();                               \
  } while (0)
