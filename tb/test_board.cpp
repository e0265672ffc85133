// SPDX-License-Identifier: Apache-2.0
// The board top (rtl/board/ni_board_top.sv) as the board runs it: two small NIs on an
// on-chip link, each node's memory in on-chip RAM, the self-test sequencer playing
// both CPUs. The tests read what a person at the board sees: the UART line and the LEDs.
#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <type_traits>

#ifndef NI_BOARD_NETLIST_ONLY
#include "Vni_board_top.h"
#endif
#include "Vni_board_top1.h"
#include "verilated_fixture.hpp"

using namespace ni;

namespace {

constexpr unsigned kLedPass = 1u << 6, kLedFail = 1u << 7, kLedRunning = 1u << 5;

// 8N1 receiver sampling the line once a board clock cycle, in the middle of each bit.
class UartRx {
 public:
  explicit UartRx(unsigned clkPerBit) : clkPerBit_(clkPerBit) {}
  void sample(bool line) {
    if (!busy_) {
      if (!line) {
        busy_ = true;
        at_ = clkPerBit_ / 2;  // to the middle of the start bit
        bit_ = 0;
        byte_ = 0;
      }
      return;
    }
    if (--at_ != 0) return;
    at_ = clkPerBit_;
    if (bit_ == 0) {
      if (line) busy_ = false;  // a glitch, not a start bit
    } else if (bit_ <= 8) {
      byte_ |= static_cast<unsigned>(line) << (bit_ - 1);
    } else {
      if (line) text += static_cast<char>(byte_);
      else ++framingErrors;
      busy_ = false;
    }
    ++bit_;
  }
  std::string text;
  unsigned framingErrors = 0;

 private:
  unsigned clkPerBit_;
  bool busy_ = false;
  unsigned at_ = 0, bit_ = 0, byte_ = 0;
};

// Two NIs on a link (Vni_board_top), and one NI looped back (Vni_board_top1, the
// bitstream's; in make postsynth its netlist): the same program, the same report.
// Board clock cycles a UART bit takes (CMakeLists.txt): the two-NI top runs with the
// divider and a fast UART (-GClkDiv=2 -GBoardHz=1843200: 2 x 8 cycles a bit), the
// one-NI top with the bitstream's parameters, the board's in rtl/ni_configs.json
// (NI_BOARD_*: ClkDiv 1, 25 MHz: 217 cycles a bit), divided as ni_board_top does.
static_assert(NI_BOARD_Nodes == 1, "Vni_board_top1 is named and tested as the one-NI top");
template <class M>
constexpr unsigned kBoardClkPerBit = NI_BOARD_ClkDiv * (NI_BOARD_BoardHz / NI_BOARD_ClkDiv / 115'200);
#ifndef NI_BOARD_NETLIST_ONLY
template <>
constexpr unsigned kBoardClkPerBit<Vni_board_top> = 2 * (1'843'200 / 2 / 115'200);
#endif

template <class M>
class BoardTest : public tb::VerilatedTest {
 protected:
  void SetUp() override {
    tb::VerilatedTest::SetUp();
    // The board's PWR button is its reset (rst_ni): reset() presses it.
    board_ = std::make_unique<tb::VlClocked<M>>(ctx(), "board");
    this->attach(board_.get());
  }
  // Runs until the report line is complete (or the watchdog fails the test); the LEDs
  // must show the result by then.
  std::string runSelfTest() {
    uart_ = UartRx{kBoardClkPerBit<M>};
    const uint64_t start = this->cycles();
    while (uart_.text.find('\n') == std::string::npos) {
      board_->eval();
      uart_.sample(board_->m.uart_tx_o);
      this->cycle();
    }
    for (int i = 0; i < 4; ++i) this->cycle();  // the LEDs follow the last stop bit
    board_->eval();
    EXPECT_EQ(uart_.framingErrors, 0u);
    std::cout << "[ board ] " << this->cycles() - start << " cycles: " << uart_.text;
    return uart_.text;
  }
  unsigned leds() const { return board_->m.led_o; }
  std::unique_ptr<tb::VlClocked<M>> board_;
  UartRx uart_{kBoardClkPerBit<M>};
};

const std::regex kPass(
    "NI self-test csr:ok write:ok read:ok confirm:ok dma:ok step:37 cycles:[0-9A-F]{8} PASS\r\n");
// The link corrupts every beat: the tunneled write never lands, so the poll for it
// (step 0x16) runs out; later groups do not run.
const std::regex kWriteFails(
    "NI self-test csr:ok write:NG read:-- confirm:-- dma:-- step:16 cycles:[0-9A-F]{8} FAIL\r\n");

#ifdef NI_BOARD_NETLIST_ONLY
using Boards = ::testing::Types<Vni_board_top1>;
#else
using Boards = ::testing::Types<Vni_board_top, Vni_board_top1>;
#endif
class BoardNames {
 public:
  template <class T>
  static std::string GetName(int) {
    return std::is_same_v<T, Vni_board_top1> ? "OneNodeLoopedBack" : "TwoNodes";
  }
};
TYPED_TEST_SUITE(BoardTest, Boards, BoardNames);

TYPED_TEST(BoardTest, SelfTestPassesAndReportsOverTheUart) {
  this->reset(20);
  EXPECT_TRUE(this->leds() & kLedRunning);
  const std::string line = this->runSelfTest();
  EXPECT_TRUE(std::regex_match(line, kPass)) << line;
  EXPECT_EQ(this->leds(), kLedPass | 0x1Fu);  // every group passed, PASS lit
  // The cycles the report names are those up to the report: fewer than the run took.
  const unsigned long reported = std::stoul(line.substr(line.find("cycles:") + 7, 8), nullptr, 16);
  EXPECT_GT(reported, 0u);
  EXPECT_LT(reported, this->cycles());
  this->RecordProperty("selftest_cycles", std::to_string(reported));
}

TYPED_TEST(BoardTest, AFaultyLinkFailsTheWriteAndTheRestartButtonRecovers) {
  this->board_->m.link_fault_i = 1;
  this->reset(20);
  std::string line = this->runSelfTest();
  EXPECT_TRUE(std::regex_match(line, kWriteFails)) << line;
  EXPECT_EQ(this->leds(), kLedFail | 0x01u);  // only the setup group passed, FAIL lit
  // The fault goes away; pressing the button runs the self-test again from reset.
  this->board_->m.link_fault_i = 0;
  this->reset(20);
  line = this->runSelfTest();
  EXPECT_TRUE(std::regex_match(line, kPass)) << line;
  EXPECT_EQ(this->leds(), kLedPass | 0x1Fu);
}

}  // namespace
