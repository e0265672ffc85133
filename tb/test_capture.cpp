// SPDX-License-Identifier: Apache-2.0
// The capture file and the Wireshark dissector (scripts/wireshark/ni_tunnel.lua)
// against the golden codec: packets made by the codec are written by CaptureWriter,
// read back by tshark with the dissector, and every decoded field must be the one the
// codec put there; a packet with a flipped bit must show a wrong ICRC or VCRC. Also:
// every packet sits at the interface of its node and capture point.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "fabric_pkt.hpp"
#include "pcap.hpp"
#include "tlp.hpp"

using namespace ni;

namespace {

// tshark's -T fields output, one vector of fields per packet.
std::vector<std::vector<std::string>> tsharkFields(const std::string& file, const std::vector<std::string>& fields) {
  std::string cmd = "tshark -X lua_script:" NI_DISSECTOR " -r " + file + " -T fields -E occurrence=f";
  for (const auto& f : fields) cmd += " -e " + f;
  cmd += " 2>/dev/null";
  std::vector<std::vector<std::string>> rows;
  if (FILE* p = popen(cmd.c_str(), "r")) {
    char line[4096];
    while (std::fgets(line, sizeof line, p)) {
      std::string s(line);
      if (!s.empty() && s.back() == '\n') s.pop_back();
      std::vector<std::string> row;
      std::stringstream ss(s);
      std::string cell;
      while (std::getline(ss, cell, '\t')) row.push_back(cell);
      row.resize(fields.size());
      rows.push_back(row);
    }
    pclose(p);
  }
  return rows;
}

std::string hex(uint64_t v, int digits) {
  char b[32];
  std::snprintf(b, sizeof b, "0x%0*llx", digits, static_cast<unsigned long long>(v));
  return b;
}

TEST(CaptureTest, DissectorDecodesWhatTheCodecEncoded) {
  // A tunneled write, a tunneled read, its completion, a continuation, and the write
  // again with one bit flipped in its payload (the ICRC must say so) and in its VCRC.
  std::vector<FabricPacket> pkts;
  FabricPacket wr;
  wr.dlid = 3;
  wr.slid = 1;
  wr.psn = 17;
  wr.tehFlags = kTehRxXlate;
  wr.memid = 5;
  wr.key = 0x1234;
  const Tlp mwr = makeMWr(0x0100, 0x2A, 0x1234'5678'9ABCull, Bytes(37, 0x5A));  // unaligned end: Last BE 0x1
  wr.payload = encodeTlp(mwr);
  pkts.push_back(wr);
  FabricPacket rd = wr;
  rd.psn = 18;
  const Tlp mrd = makeMRd(0x0100, 0x2B, 0xFEDC'0000'0042ull, 100);
  rd.payload = encodeTlp(mrd);
  pkts.push_back(rd);
  FabricPacket rsp = answerPacket(1, 3, kOpTunnelRsp, 18);
  Tlp cpl = makeCplD(0x0300, 0x0100, 0x2B, 0x42, Bytes(104, 0x11));
  cpl.byteCount = 100;
  rsp.payload = encodeTlp(cpl);
  pkts.push_back(rsp);
  FabricPacket cont = wr;
  cont.opcode = kOpTunnelCont;
  cont.psn = 19;
  cont.payload = Bytes(64, 0x77);
  pkts.push_back(cont);
  const std::string file = (std::filesystem::temp_directory_path() / "ni_capture_test.pcapng").string();
  {
    CaptureWriter w;
    ASSERT_TRUE(w.open(file));
    for (size_t i = 0; i < pkts.size(); ++i) w.write(100 * i, encodeFabric(pkts[i]), i == 2 ? 2 : 0, CaptureWriter::Point::Tx);
    Bytes bad = encodeFabric(wr);
    bad[40] ^= 0x04;  // in the TLP: the ICRC must fail, the VCRC too (it covers everything)
    w.write(500, bad, 2, CaptureWriter::Point::Rx);
    Bytes badV = encodeFabric(wr);
    badV.back() ^= 0x01;  // only the VCRC is wrong
    w.write(600, badV, 9, CaptureWriter::Point::Rx);
  }
  const auto rows = tsharkFields(file, {"nitunnel.opcode", "nitunnel.psn", "nitunnel.teh.flags", "nitunnel.teh.memid",
                                        "nitunnel.teh.key", "nitunnel.tlp.fmt_type", "nitunnel.tlp.length",
                                        "nitunnel.tlp.requester", "nitunnel.tlp.tag", "nitunnel.tlp.first_be",
                                        "nitunnel.tlp.last_be", "nitunnel.tlp.address", "nitunnel.tlp.byte_count",
                                        "nitunnel.tlp.lower_address", "nitunnel.icrc_ok", "nitunnel.vcrc_ok",
                                        "frame.interface_name"});
  ASSERT_EQ(rows.size(), 6u) << "tshark read the capture with the dissector (" NI_DISSECTOR ")";
  // The write, as the codec encoded it.
  const std::vector<std::string> w0 = {"0xc0", "17", hex(kTehRxXlate, 2), "5", "0x1234", "0x60",
                                       std::to_string(mwr.lengthDw), "0x0100", "0x2a", hex(mwr.firstBe, 2),
                                       hex(mwr.lastBe, 2), hex(mwr.addr, 16), "", "", "1", "1", "node0 tx"};
  EXPECT_EQ(rows[0], w0);
  EXPECT_EQ(rows[1][5], "0x20");
  EXPECT_EQ(rows[1][6], std::to_string(mrd.lengthDw));
  EXPECT_EQ(rows[1][9], hex(mrd.firstBe, 2));
  EXPECT_EQ(rows[1][10], hex(mrd.lastBe, 2));
  EXPECT_EQ(rows[1][11], hex(mrd.addr, 16));
  // The completion: requester, tag, byte count and lower address.
  EXPECT_EQ(rows[2][0], "0xc1");
  EXPECT_EQ(rows[2][5], "0x4a");
  EXPECT_EQ(rows[2][7], "0x0100");
  EXPECT_EQ(rows[2][8], "0x2b");
  EXPECT_EQ(rows[2][12], "100");
  EXPECT_EQ(rows[2][13], "0x42");
  EXPECT_EQ(rows[2][16], "node2 tx");
  // The continuation: its PSN from the CTH, no TEH or TLP.
  EXPECT_EQ(rows[3][0], "0xc2");
  EXPECT_EQ(rows[3][1], "19");
  EXPECT_EQ(rows[3][5], "");
  EXPECT_EQ(rows[3][14], "1");
  // Damaged copies: both CRCs wrong after a payload bit; only the VCRC after a VCRC bit.
  EXPECT_EQ(rows[4][14], "0");
  EXPECT_EQ(rows[4][15], "0");
  EXPECT_EQ(rows[4][16], "node2 rx");
  EXPECT_EQ(rows[5][14], "1");
  EXPECT_EQ(rows[5][15], "0");
  EXPECT_EQ(rows[5][16], "node9 rx") << "the interface names the node at any node count";
  std::filesystem::remove(file);
}

}  // namespace
