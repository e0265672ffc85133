-- SPDX-License-Identifier: Apache-2.0
-- Wireshark/tshark dissector for the NI's own fabric packets (docs/formats.md):
-- TUNNEL_REQ (0xC0), TUNNEL_RSP (0xC1) with their tunnel extension header (TEH) and
-- the tunneled TLP's header, and TUNNEL_CONT (0xC2), whose 8-byte CTH stands in the
-- BTH's place. Wireshark's InfiniBand dissector shows these opcodes as "Unknown" and
-- reads a CTH as a BTH; this one adds a "NI tunnel" tree after it. It also checks the
-- ICRC and VCRC of every InfiniBand packet, which Wireshark does not.
--
--   tshark -X lua_script:scripts/wireshark/ni_tunnel.lua -r build/sim/fabric.pcapng -V
--
-- Fields: nitunnel.opcode, .psn, .teh.flags, .teh.rcv_counter, .teh.memid, .teh.key,
-- .tlp.fmt_type, .tlp.length, .tlp.requester, .tlp.tag, .tlp.first_be, .tlp.last_be,
-- .tlp.address, .tlp.completer, .tlp.status, .tlp.byte_count, .tlp.lower_address,
-- .icrc_ok, .vcrc_ok. A postdissector: it reads the bytes of the packet Wireshark's
-- InfiniBand dissector decoded (in the runner's captures, behind an ERF record header).

local p = Proto("nitunnel", "NI tunnel")
local f = p.fields
local op_names = { [0xC0] = "TUNNEL_REQ", [0xC1] = "TUNNEL_RSP", [0xC2] = "TUNNEL_CONT" }
f.opcode = ProtoField.uint8("nitunnel.opcode", "Opcode", base.HEX, op_names)
f.psn = ProtoField.uint32("nitunnel.psn", "PSN", base.DEC)
f.flags = ProtoField.uint8("nitunnel.teh.flags", "TEH flags", base.HEX)
f.counter = ProtoField.uint8("nitunnel.teh.rcv_counter", "Reception counter", base.DEC)
f.memid = ProtoField.uint16("nitunnel.teh.memid", "Memory ID", base.DEC)
f.key = ProtoField.uint16("nitunnel.teh.key", "Protection key", base.HEX)
f.fmt_type = ProtoField.uint8("nitunnel.tlp.fmt_type", "TLP Fmt/Type", base.HEX, {
  [0x20] = "MRd (4DW)", [0x60] = "MWr (4DW)", [0x0A] = "Cpl", [0x4A] = "CplD", [0x6C] = "FetchAdd",
  [0x6D] = "Swap", [0x6E] = "CAS", [0x7B] = "DMWr" })
f.length = ProtoField.uint16("nitunnel.tlp.length", "TLP Length (DW)", base.DEC)
f.requester = ProtoField.uint16("nitunnel.tlp.requester", "Requester ID", base.HEX)
f.tag = ProtoField.uint8("nitunnel.tlp.tag", "Tag", base.HEX)
f.first_be = ProtoField.uint8("nitunnel.tlp.first_be", "First BE", base.HEX)
f.last_be = ProtoField.uint8("nitunnel.tlp.last_be", "Last BE", base.HEX)
f.address = ProtoField.uint64("nitunnel.tlp.address", "Address", base.HEX)
f.completer = ProtoField.uint16("nitunnel.tlp.completer", "Completer ID", base.HEX)
f.status = ProtoField.uint8("nitunnel.tlp.status", "Completion status", base.DEC,
  { [0] = "SC", [1] = "UR", [2] = "CRS", [4] = "CA" })
f.byte_count = ProtoField.uint16("nitunnel.tlp.byte_count", "Byte Count", base.DEC)
f.lower_address = ProtoField.uint8("nitunnel.tlp.lower_address", "Lower Address", base.HEX)
f.icrc_ok = ProtoField.bool("nitunnel.icrc_ok", "ICRC right")
f.vcrc_ok = ProtoField.bool("nitunnel.vcrc_ok", "VCRC right")

-- CRC-32/ISO-HDLC and the VCRC's CRC-16 (polynomial 0x100B, reflected: 0xD008), both
-- with initial value and final XOR all ones (docs/formats.md).
local function table_for(poly)
  local t = {}
  for i = 0, 255 do
    local c = i
    for _ = 1, 8 do
      if bit32.band(c, 1) ~= 0 then c = bit32.bxor(bit32.rshift(c, 1), poly) else c = bit32.rshift(c, 1) end
    end
    t[i] = c
  end
  return t
end
local crc32_table = table_for(0xEDB88320)
local crc16_table = table_for(0xD008)

local function crc(tbl, init, mask, bytes, from, to, variant)
  local c = init
  for i = from, to - 1 do
    local b = bytes:get_index(i)
    if variant then b = variant(i - from, b) end
    c = bit32.bxor(tbl[bit32.band(bit32.bxor(c, b), 0xFF)], bit32.rshift(c, 8))
  end
  return bit32.band(bit32.bxor(c, mask), mask)
end

-- The ICRC reads the variant fields as ones: LRH VL (byte 0 bits 7:4) and BTH resv8a
-- (byte 12; the CTH's reserved byte 12 too).
local function icrc_variant(i, b)
  if i == 0 then return bit32.bor(b, 0xF0) end
  if i == 12 then return 0xFF end
  return b
end

local function le(bytes, at, n)
  local v = 0
  for i = n - 1, 0, -1 do v = v * 256 + bytes:get_index(at + i) end
  return v
end

local infiniband = Field.new("infiniband")

function p.dissector(tvb, pinfo, tree)
  -- The InfiniBand packet as Wireshark's own dissector found it (behind the ERF header).
  local found = infiniband()
  if not found or found.range:len() < 26 then return end
  local ib = found.range:tvb()
  local bytes = ib:bytes()
  local n = ib:len()
  local lnh = bit32.band(ib(1, 1):uint(), 3)
  local pktlen = bit32.band(ib(4, 2):uint(), 0x7FF) * 4
  local t = tree:add(p, ib(), "NI tunnel")
  -- The CRCs, when the packet is as long as PktLen says (raw packets, LNH 0, carry a VCRC only).
  if pktlen + 2 == n and lnh == 2 then
    local want_icrc = le(bytes, n - 6, 4)
    local got_icrc = crc(crc32_table, 0xFFFFFFFF, 0xFFFFFFFF, bytes, 0, n - 6, icrc_variant)
    t:add(f.icrc_ok, ib(n - 6, 4), want_icrc == got_icrc)
  end
  if pktlen + 2 == n or (lnh == 0) then
    local want_vcrc = le(bytes, n - 2, 2)
    local got_vcrc = crc(crc16_table, 0xFFFF, 0xFFFF, bytes, 0, n - 2, nil)
    t:add(f.vcrc_ok, ib(n - 2, 2), want_vcrc == got_vcrc)
  end
  if lnh ~= 2 then return end
  local op = ib(8, 1):uint()
  if not op_names[op] then return end
  t:add(f.opcode, ib(8, 1))
  pinfo.cols.protocol = "NI"
  if op == 0xC2 then
    t:add(f.psn, ib(13, 3))
    pinfo.cols.info = string.format("TUNNEL_CONT PSN %d, %d data bytes", ib(13, 3):uint(), n - 16 - 6)
    return
  end
  t:add(f.psn, ib(17, 3))
  if n < 32 + 12 + 6 then return end
  t:add(f.flags, ib(20, 1))
  t:add(f.counter, ib(21, 1))
  t:add(f.memid, ib(22, 2))
  t:add(f.key, ib(24, 2))
  local tlp = 32
  local ft = ib(tlp, 1):uint()
  t:add(f.fmt_type, ib(tlp, 1))
  t:add(f.length, ib(tlp + 2, 2), bit32.band(ib(tlp + 2, 2):uint(), 0x3FF))
  local info
  if ft == 0x0A or ft == 0x4A then
    t:add(f.completer, ib(tlp + 4, 2))
    t:add(f.status, ib(tlp + 6, 1), bit32.rshift(ib(tlp + 6, 1):uint(), 5))
    t:add(f.byte_count, ib(tlp + 6, 2), bit32.band(ib(tlp + 6, 2):uint(), 0xFFF))
    t:add(f.requester, ib(tlp + 8, 2))
    t:add(f.tag, ib(tlp + 10, 1))
    t:add(f.lower_address, ib(tlp + 11, 1), bit32.band(ib(tlp + 11, 1):uint(), 0x7F))
    info = string.format("%s %s req %04x tag %d", op_names[op], ft == 0x4A and "CplD" or "Cpl",
                         ib(tlp + 8, 2):uint(), ib(tlp + 10, 1):uint())
  elseif n >= tlp + 16 + 6 then
    t:add(f.requester, ib(tlp + 4, 2))
    t:add(f.tag, ib(tlp + 6, 1))
    t:add(f.first_be, ib(tlp + 7, 1), bit32.band(ib(tlp + 7, 1):uint(), 0xF))
    t:add(f.last_be, ib(tlp + 7, 1), bit32.rshift(ib(tlp + 7, 1):uint(), 4))
    t:add(f.address, ib(tlp + 8, 8), ib(tlp + 8, 8):uint64())
    info = string.format("%s fmt/type 0x%02x addr 0x%s len %d DW", op_names[op], ft,
                         ib(tlp + 8, 8):uint64():tohex(), bit32.band(ib(tlp + 2, 2):uint(), 0x3FF))
  end
  if info then pinfo.cols.info = info end
end

register_postdissector(p)
