-- Wireshark dissector for jdet, the Java Direct Ethernet Transport (docs/PROTOCOL.md).
--
-- Install: copy to ~/.local/lib/wireshark/plugins/ (Wireshark >= 3.6, Lua 5.2), or run
--   wireshark -X lua_script:tools/wireshark/jdet.lua    tshark -X lua_script:tools/wireshark/jdet.lua -r FILE
--
-- What it does:
--   * claims UDP datagrams that start with a jdet header (heuristic: length >= 80, magic "JD", version 1), UDP
--     port 19012 (the synthetic port of in-process fabric frames in captures jdet writes itself with
--     Configuration.capture / jdet perf --capture), and any port through Decode As (jdet.udp.port preference too);
--   * shows every header field as jdet.* (filterable), with opcode, flag, NAK status, event code and CM reject
--     reason names;
--   * checks the payload length and the CRC32C (only of frames captured whole: jdet.crc.good), except a CRC of 0
--     from a loopback address, which means none was sent (jdet.crc.none);
--   * sequence analysis per sending queue pair and stream (request or response) and per capture interface and
--     direction: retransmissions, out-of-order frames, gaps (jdet.analysis.*); decodes SACK bitmaps into the
--     sequence numbers the peer holds; links READ/atomic requests to their responses (with the response time),
--     NAKs to the refused frame, and the connection manager's REQUEST -> ACCEPT/REJECT -> READY and
--     DISCONNECT -> REPLY exchanges;
--   * hands SEND/WRITE payloads and CM private data on: to the jdet.payload and jdet.cm.private dissector
--     tables (keyed by the CM service id of the connection, Decode As), to heuristic lists of the same names
--     where this Wireshark can create them from Lua (4.2 and later), else shows them as data.

local jdet = Proto("jdet", "jdet (Java Direct Ethernet Transport)")

local HEADER = 80
local MAGIC0, MAGIC1, VERSION = 0x4A, 0x44, 1
local FABRIC_PORT = 19012

local opcodes = {
    [0] = "SEND", [1] = "WRITE", [2] = "READ", [3] = "COMP_EXCH", [4] = "FETCH_ADD", [6] = "ACK",
    [7] = "DISCONNECT", [16] = "READ_RESP", [17] = "ATOMIC_RESP", [18] = "NAK",
    [32] = "CM_REQUEST", [33] = "CM_ACCEPT", [34] = "CM_REJECT", [35] = "CM_READY", [36] = "CM_DISCONNECT",
    [37] = "CM_DISCONNECT_REPLY",
}
local OP = {SEND = 0, WRITE = 1, READ = 2, COMP_EXCH = 3, FETCH_ADD = 4, ACK = 6, DISCONNECT = 7,
    READ_RESP = 16, ATOMIC_RESP = 17, NAK = 18, CM_REQUEST = 32, CM_ACCEPT = 33, CM_REJECT = 34, CM_READY = 35,
    CM_DISCONNECT = 36, CM_DISCONNECT_REPLY = 37}

local wc_status = {
    [0] = "SUCCESS", [1] = "FLUSHED", [2] = "PROTECTION_ERR", [3] = "BOUNDS_ERR", [4] = "ACCESS_ERR",
    [5] = "WRAP_ERR", [6] = "RETRY_EXCEEDED", [7] = "RNR_RETRY_EXCEEDED", [8] = "INVALID_REQUEST",
    [9] = "BIND_ERR", [10] = "LOCAL_OP_ERR", [11] = "REMOTE_OP_ERR", [12] = "LOCAL_PROTECTION_ERR",
    [0xFFFF] = "RNR (receiver not ready)",
}
local event_codes = {
    [0] = "USER_GENERATED", [1] = "CQ_COMPLETION", [2] = "NIC_FATAL", [3] = "NIC_REMOVED", [4] = "DISCONNECT",
    [5] = "CQ_OVERRUN", [6] = "CQ_FATAL", [7] = "QP_SQ_ERROR", [8] = "QP_RQ_ERROR", [9] = "QP_DESTROYED",
    [10] = "QP_ERROR", [11] = "QP_FATAL", [12] = "INVALID_OPCODE", [13] = "INVALID_LENGTH", [14] = "INVALID_QP",
    [15] = "INVALID_MSG_ID", [16] = "INVALID_L_KEY", [17] = "INVALID_RDMA_KEY", [18] = "INVALID_RDMA_ID",
    [19] = "INVALID_ATOMIC_KEY", [20] = "INVALID_ATOMIC_ID", [21] = "MAX_IR_EXCEEDED", [22] = "ACK_TIMEOUT",
    [23] = "PROTECTION_VIOLATION", [24] = "BOUNDS_VIOLATION", [25] = "ACCESS_VIOLATION", [26] = "WRAP_ERROR",
}
local reject_reasons = {[1] = "rejected by the application", [2] = "no listener on the service id"}

local F = {
    magic = ProtoField.uint16("jdet.magic", "Magic", base.HEX),
    version = ProtoField.uint8("jdet.version", "Version"),
    opcode = ProtoField.uint8("jdet.opcode", "Opcode", base.DEC, opcodes),
    flags = ProtoField.uint16("jdet.flags", "Flags", base.HEX),
    flag_last = ProtoField.bool("jdet.flags.last", "LAST", 16, nil, 0x4000),
    flag_immediate = ProtoField.bool("jdet.flags.immediate", "IMMEDIATE", 16, nil, 0x2000),
    flag_solicited = ProtoField.bool("jdet.flags.solicited", "SOLICITED", 16, nil, 0x1000),
    flag_force_ack = ProtoField.bool("jdet.flags.force_ack", "FORCE_ACK", 16, nil, 0x0800),
    flag_invalidate = ProtoField.bool("jdet.flags.invalidate", "INVALIDATE", 16, nil, 0x0200),
    flag_response_sack = ProtoField.bool("jdet.flags.response_sack", "RESPONSE_SACK", 16, nil, 0x0100),
    payload_length = ProtoField.uint16("jdet.payload_length", "Payload length"),
    dst_qp = ProtoField.uint32("jdet.dst_qp", "Destination QP", base.HEX),
    src_qp = ProtoField.uint32("jdet.src_qp", "Source QP", base.HEX),
    seq = ProtoField.uint32("jdet.seq", "Sequence number"),
    req_ack = ProtoField.uint32("jdet.req_ack", "Request ack"),
    rsp_ack = ProtoField.uint32("jdet.rsp_ack", "Response ack"),
    msg_id = ProtoField.uint32("jdet.msg_id", "Message id"),
    sack = ProtoField.uint32("jdet.sack", "SACK", base.HEX),
    sack_seq = ProtoField.uint32("jdet.sack.seq", "Held sequence number"),
    crc = ProtoField.uint32("jdet.crc", "CRC32C", base.HEX),
    crc_good = ProtoField.bool("jdet.crc.good", "CRC good"),
    crc_computed = ProtoField.uint32("jdet.crc.computed", "Computed CRC32C", base.HEX),
    address = ProtoField.uint64("jdet.address", "Address", base.HEX),
    operand1 = ProtoField.uint64("jdet.operand1", "Operand 1", base.HEX),
    operand2 = ProtoField.uint64("jdet.operand2", "Operand 2", base.HEX),
    key = ProtoField.uint32("jdet.key", "Key", base.HEX),
    nak_status = ProtoField.uint32("jdet.nak.status", "NAK status", base.DEC, wc_status),
    nak_event = ProtoField.uint32("jdet.nak.event", "NAK event", base.DEC, event_codes),
    disconnect_event = ProtoField.uint32("jdet.disconnect.event", "Disconnect event", base.DEC, event_codes),
    length = ProtoField.uint32("jdet.length", "Length"),
    offset = ProtoField.uint32("jdet.offset", "Offset"),
    immediate = ProtoField.uint32("jdet.immediate", "Immediate data", base.HEX),
    payload = ProtoField.bytes("jdet.payload", "Payload"),
    cm_service = ProtoField.uint32("jdet.cm.service_id", "Service id", base.HEX),
    cm_conn_id = ProtoField.uint32("jdet.cm.id", "Exchange id", base.HEX),
    cm_req_isn = ProtoField.uint32("jdet.cm.request_isn", "First request sequence number"),
    cm_rsp_isn = ProtoField.uint32("jdet.cm.response_isn", "First response sequence number"),
    cm_max_or = ProtoField.uint32("jdet.cm.max_or", "max_or"),
    cm_max_ir = ProtoField.uint32("jdet.cm.max_ir", "max_ir"),
    cm_reason = ProtoField.uint32("jdet.cm.reject_reason", "Reject reason", base.DEC, reject_reasons),
    cm_peer_qp = ProtoField.uint32("jdet.cm.peer_qp", "Peer QP", base.HEX),
    cm_private = ProtoField.bytes("jdet.cm.private", "Private data"),
    stream = ProtoField.string("jdet.stream", "Stream"),
    a_retrans_of = ProtoField.framenum("jdet.analysis.retransmission_of", "Retransmission of frame"),
    a_request_in = ProtoField.framenum("jdet.analysis.request_in", "Request in frame"),
    a_response_in = ProtoField.framenum("jdet.analysis.response_in", "Response in frame"),
    a_response_time = ProtoField.relative_time("jdet.analysis.response_time", "Response time"),
    a_nak_for = ProtoField.framenum("jdet.analysis.nak_of", "Refused frame"),
    a_gap = ProtoField.uint32("jdet.analysis.gap_frames", "Frames missing before this one"),
    cm_request_in = ProtoField.framenum("jdet.cm.request_in", "CM request in frame"),
    cm_answer_in = ProtoField.framenum("jdet.cm.answer_in", "CM answer in frame"),
    cm_setup_time = ProtoField.relative_time("jdet.cm.time", "Time since the CM request"),
}
local field_list = {}
for _, f in pairs(F) do field_list[#field_list + 1] = f end
jdet.fields = field_list

local E = {
    bad_crc = ProtoExpert.new("jdet.crc.bad", "Bad CRC32C", expert.group.CHECKSUM, expert.severity.ERROR),
    bad_length = ProtoExpert.new("jdet.malformed.length", "Payload length does not match the datagram",
        expert.group.MALFORMED, expert.severity.ERROR),
    bad_magic = ProtoExpert.new("jdet.malformed.magic", "Bad magic (not \"JD\")", expert.group.MALFORMED,
        expert.severity.ERROR),
    bad_version = ProtoExpert.new("jdet.malformed.version", "Unknown version", expert.group.MALFORMED,
        expert.severity.ERROR),
    bad_opcode = ProtoExpert.new("jdet.malformed.opcode", "Unknown opcode", expert.group.MALFORMED,
        expert.severity.ERROR),
    truncated = ProtoExpert.new("jdet.truncated", "Frame shorter than the 80-byte header", expert.group.MALFORMED,
        expert.severity.ERROR),
    unchecked = ProtoExpert.new("jdet.crc.unchecked", "CRC not checked: frame not captured whole",
        expert.group.CHECKSUM, expert.severity.NOTE),
    no_crc = ProtoExpert.new("jdet.crc.none", "No CRC: sent over loopback, where the receiver checks none",
        expert.group.CHECKSUM, expert.severity.CHAT),
    retransmission = ProtoExpert.new("jdet.analysis.retransmission", "Retransmission (sequence number seen before)",
        expert.group.SEQUENCE, expert.severity.NOTE),
    out_of_order = ProtoExpert.new("jdet.analysis.out_of_order", "Out of order (fills an earlier gap)",
        expert.group.SEQUENCE, expert.severity.WARN),
    gap = ProtoExpert.new("jdet.analysis.gap", "Frames missing before this one (lost or not captured)",
        expert.group.SEQUENCE, expert.severity.WARN),
    sack = ProtoExpert.new("jdet.analysis.sack", "Selective acknowledgement: the sender holds frames beyond a gap",
        expert.group.SEQUENCE, expert.severity.NOTE),
    nak = ProtoExpert.new("jdet.analysis.nak", "NAK", expert.group.RESPONSE_CODE, expert.severity.WARN),
    rnr = ProtoExpert.new("jdet.analysis.rnr", "Receiver not ready", expert.group.SEQUENCE, expert.severity.NOTE),
    disconnect = ProtoExpert.new("jdet.analysis.disconnect", "Disconnect", expert.group.SEQUENCE,
        expert.severity.NOTE),
    cm_reject = ProtoExpert.new("jdet.analysis.cm_reject", "Connection rejected", expert.group.RESPONSE_CODE,
        expert.severity.WARN),
}
jdet.experts = {E.bad_magic, E.bad_crc, E.bad_length, E.bad_version, E.bad_opcode, E.truncated, E.unchecked,
    E.no_crc, E.retransmission, E.out_of_order, E.gap, E.sack, E.nak, E.rnr, E.disconnect, E.cm_reject}

jdet.prefs.udp_port = Pref.uint("UDP port", FABRIC_PORT, "A UDP port to decode as jdet (besides the heuristic)")
jdet.prefs.check_crc = Pref.bool("Check the CRC32C", true, "Compute the CRC32C of frames captured whole")
jdet.prefs.analysis = Pref.bool("Sequence analysis", true, "Retransmissions, gaps, request/response links")

-- Hand-off tables for applications on top (Decode As, keyed by the CM service id of the connection).
local payload_table = DissectorTable.new("jdet.payload", "jdet send/write payload (service id)", ftypes.UINT32,
    base.HEX, jdet)
local private_table = DissectorTable.new("jdet.cm.private", "jdet CM private data (service id)", ftypes.UINT32,
    base.HEX, jdet)
local heuristic_lists = false
local has_new, heuristic_new = pcall(function() return DissectorTable.heuristic_new end) -- Wireshark 4.2+
if has_new and heuristic_new then
    heuristic_lists = pcall(heuristic_new, "jdet.payload", jdet) and pcall(heuristic_new, "jdet.cm.private", jdet)
end
local data_dissector = Dissector.get("data")


-- Whether the datagram came from 127.0.0.0/8: there a CRC field of 0 means "none" (docs/PROTOCOL.md, section 4).
local function from_loopback(pinfo)
    return string.match(tostring(pinfo.net_src), "^127%.%d+%.%d+%.%d+$") ~= nil
end

-- CRC32C (Castagnoli, reflected polynomial 0x82F63B78), table driven.
local crc_table = {}
for i = 0, 255 do
    local c = i
    for _ = 1, 8 do
        if bit32.band(c, 1) ~= 0 then c = bit32.bxor(bit32.rshift(c, 1), 0x82F63B78) else c = bit32.rshift(c, 1) end
    end
    crc_table[i] = c
end

local function crc32c(tvb, length)
    local bytes = tvb:raw(0, length)
    local c = 0xFFFFFFFF
    local band, bxor, rshift, byte = bit32.band, bit32.bxor, bit32.rshift, string.byte
    for i = 1, length do
        local b = byte(bytes, i)
        if i >= 37 and i <= 40 then b = 0 end -- the CRC field counts as zero
        c = bxor(crc_table[band(bxor(c, b), 0xFF)], rshift(c, 8))
    end
    return bxor(c, 0xFFFFFFFF)
end

local function nstime(seconds)
    local s = math.floor(seconds)
    return NSTime(s, math.floor((seconds - s) * 1e9 + 0.5))
end

-- Sequence numbers compare modulo 2^32.
local function after(a, b)
    local d = (a - b) % 4294967296
    return d ~= 0 and d < 2147483648
end

-- Analysis state, rebuilt on every first pass.
local streams, requests, cm_exchanges, services, results

local function reset_state()
    streams = {}      -- sender stream key -> {highest = seq, seen = {seq -> frame}}
    requests = {}     -- read/atomic key -> {frame, time}
    cm_exchanges = {} -- CM exchange key -> {frame, time, qp, service}
    services = {}     -- connection key -> service id
    results = {}      -- frame number -> analysis of that frame
end
reset_state()
function jdet.init()
    reset_state()
end

-- Where a frame was captured: jdet's own captures record each frame on the NIC that sent it (direction "sent")
-- and on the NIC that received it ("received"), so one file holds two copies. The capture point (the sender's
-- address for a sent copy, the receiver's for a received one) keeps the copies apart in the analysis. A sniffer
-- capture has no direction: one copy, one capture point. (The interface id is not used: tshark's first pass has
-- no tree to read it from.)
local function capture_point(pinfo)
    local dir = pinfo.p2p_dir
    if dir == 0 then return tostring(pinfo.src) .. ":" .. pinfo.src_port end
    if dir == 1 then return tostring(pinfo.dst) .. ":" .. pinfo.dst_port end
    return "?"
end

-- forward: sender > receiver of this frame; else receiver > sender (the stream this frame answers)
local function endpoint_key(pinfo, forward)
    local a = tostring(pinfo.src) .. ":" .. pinfo.src_port
    local b = tostring(pinfo.dst) .. ":" .. pinfo.dst_port
    if forward then return capture_point(pinfo) .. "|" .. a .. ">" .. b end
    return capture_point(pinfo) .. "|" .. b .. ">" .. a
end
local pair_key = endpoint_key

local function stream_of(op)
    if op <= OP.FETCH_ADD then return "request" end
    if op == OP.READ_RESP or op == OP.ATOMIC_RESP then return "response" end
    return nil
end

-- jdet sends each stream in sequence order; only a retransmission (always flagged FORCE_ACK) or a network that
-- reorders puts a frame behind a later one. So: a sequence number seen before, or an earlier one flagged
-- FORCE_ACK, is a retransmission; an earlier one without the flag was reordered on the way.
local function analyse_sequence(pinfo, r, src_qp, dst_qp, seq, stream, force_ack)
    local key = endpoint_key(pinfo, true) .. "|" .. src_qp .. ">" .. dst_qp .. "|" .. stream
    local s = streams[key]
    if not s then
        s = {highest = seq, seen = {}}
        streams[key] = s
        s.seen[seq] = pinfo.number
        return
    end
    local first = s.seen[seq]
    if first then
        r.retransmission_of = first
    elseif after(seq, s.highest) then
        local missing = (seq - s.highest - 1) % 4294967296
        if missing > 0 then r.gap = missing end
        s.highest = seq
    elseif force_ack then
        r.retransmission_of = 0
    else
        r.out_of_order = true
    end
    if not first then s.seen[seq] = pinfo.number end
    s.last_frame_of = s.last_frame_of or {}
    s.last_frame_of[seq] = pinfo.number
end

local function analyse(pinfo, op, flags, src_qp, dst_qp, seq, msg_id, key)
    local r = {}
    local stream = stream_of(op)
    local conn = pair_key(pinfo, true) .. "|" .. src_qp .. ">" .. dst_qp
    local back = pair_key(pinfo, false) .. "|" .. dst_qp .. ">" .. src_qp
    if stream and seq ~= 0 then
        analyse_sequence(pinfo, r, src_qp, dst_qp, seq, stream, bit32.band(flags, 0x0800) ~= 0)
    end
    if op == OP.READ or op == OP.COMP_EXCH or op == OP.FETCH_ADD then
        local k = conn .. "|" .. msg_id
        if not requests[k] then requests[k] = {frame = pinfo.number, time = pinfo.abs_ts} end
    elseif op == OP.READ_RESP or op == OP.ATOMIC_RESP then
        local q = requests[back .. "|" .. msg_id]
        if q then
            r.request_in = q.frame
            r.response_time = nstime(pinfo.abs_ts - q.time)
            if not q.response then
                q.response = pinfo.number
                results[q.frame] = results[q.frame] or {}
                results[q.frame].response_in = pinfo.number
            end
        end
    elseif op == OP.NAK then
        local skey = endpoint_key(pinfo, false) .. "|" .. dst_qp .. ">" .. src_qp .. "|request"
        local s = streams[skey]
        if s and s.last_frame_of then r.nak_of = s.last_frame_of[seq] end
    elseif op == OP.CM_REQUEST or op == OP.CM_DISCONNECT then
        local k = pair_key(pinfo, true) .. "|" .. msg_id
        if not cm_exchanges[k] then
            cm_exchanges[k] = {frame = pinfo.number, time = pinfo.abs_ts, qp = src_qp, service = key}
        end
    elseif op == OP.CM_ACCEPT or op == OP.CM_REJECT or op == OP.CM_READY or op == OP.CM_DISCONNECT_REPLY then
        local k = (op == OP.CM_READY and pair_key(pinfo, true) or pair_key(pinfo, false)) .. "|" .. msg_id
        local x = cm_exchanges[k]
        if x then
            r.cm_request_in = x.frame
            r.cm_time = nstime(pinfo.abs_ts - x.time)
            if op ~= OP.CM_READY and not x.answer then
                x.answer = pinfo.number
                results[x.frame] = results[x.frame] or {}
                results[x.frame].cm_answer_in = pinfo.number
            end
            if op == OP.CM_ACCEPT then
                -- remember the service of the new connection, both ways, for the payload hand-off
                services[pair_key(pinfo, true) .. "|" .. src_qp .. ">" .. x.qp] = key
                services[pair_key(pinfo, false) .. "|" .. x.qp .. ">" .. src_qp] = key
            end
        end
    end
    r.service = services[conn]
    return r
end

local function hand_off(table, list, service, tvb, pinfo, tree)
    if tvb:len() == 0 then return end
    if service and table:get_dissector(service) then
        table:try(service, tvb, pinfo, tree)
        return
    end
    if heuristic_lists and DissectorTable.try_heuristics(list, tvb, pinfo, tree) then return end
    data_dissector:call(tvb, pinfo, tree)
end

local function flag_text(flags)
    local t = {}
    if bit32.band(flags, 0x4000) ~= 0 then t[#t + 1] = "LAST" end
    if bit32.band(flags, 0x2000) ~= 0 then t[#t + 1] = "IMM" end
    if bit32.band(flags, 0x1000) ~= 0 then t[#t + 1] = "SOL" end
    if bit32.band(flags, 0x0800) ~= 0 then t[#t + 1] = "FACK" end
    if bit32.band(flags, 0x0200) ~= 0 then t[#t + 1] = "INV" end
    if bit32.band(flags, 0x0100) ~= 0 then t[#t + 1] = "RSACK" end
    return table.concat(t, ",")
end

local function dissect(tvb, pinfo, tree)
    local captured = tvb:len()
    local reported = tvb:reported_len()
    if captured < 4 then return 0 end
    pinfo.cols.protocol = "jdet"
    local root = tree:add(jdet, tvb(0, math.min(captured, reported)))
    local magic_item = root:add_le(F.magic, tvb(0, 2))
    if tvb(0, 1):uint() ~= MAGIC0 or tvb(1, 1):uint() ~= MAGIC1 then
        magic_item:add_proto_expert_info(E.bad_magic)
    end
    root:add(F.version, tvb(2, 1))
    local version = tvb(2, 1):uint()
    local op = tvb(3, 1):uint()
    local op_item = root:add(F.opcode, tvb(3, 1))
    local name = opcodes[op] or ("OP_" .. op)
    if version ~= VERSION then root:add_proto_expert_info(E.bad_version) end
    if not opcodes[op] then op_item:add_proto_expert_info(E.bad_opcode) end
    if reported < HEADER or captured < HEADER then
        if reported < HEADER then root:add_proto_expert_info(E.truncated) end
        pinfo.cols.info = name .. " (truncated)"
        return captured
    end

    local flags = tvb(4, 2):le_uint()
    local fl = root:add_le(F.flags, tvb(4, 2))
    fl:append_text(" (" .. flag_text(flags) .. ")")
    fl:add_le(F.flag_last, tvb(4, 2))
    fl:add_le(F.flag_immediate, tvb(4, 2))
    fl:add_le(F.flag_solicited, tvb(4, 2))
    fl:add_le(F.flag_force_ack, tvb(4, 2))
    fl:add_le(F.flag_invalidate, tvb(4, 2))
    fl:add_le(F.flag_response_sack, tvb(4, 2))
    local plen = tvb(6, 2):le_uint()
    local plen_item = root:add_le(F.payload_length, tvb(6, 2))
    if plen ~= reported - HEADER then plen_item:add_proto_expert_info(E.bad_length) end
    local dst_qp = tvb(8, 4):le_uint()
    local src_qp = tvb(12, 4):le_uint()
    local seq = tvb(16, 4):le_uint()
    local req_ack = tvb(20, 4):le_uint()
    local rsp_ack = tvb(24, 4):le_uint()
    local msg_id = tvb(28, 4):le_uint()
    local sack = tvb(32, 4):le_uint()
    local key = tvb(64, 4):le_uint()
    local length = tvb(68, 4):le_uint()
    root:add_le(F.dst_qp, tvb(8, 4))
    root:add_le(F.src_qp, tvb(12, 4))
    local stream = stream_of(op)
    if stream then root:add(F.stream, stream):set_generated() end
    root:add_le(F.seq, tvb(16, 4))
    root:add_le(F.req_ack, tvb(20, 4))
    root:add_le(F.rsp_ack, tvb(24, 4))
    local cm = op >= OP.CM_REQUEST and op <= OP.CM_DISCONNECT_REPLY
    if cm then
        root:add_le(F.cm_conn_id, tvb(28, 4))
    end
    root:add_le(F.msg_id, tvb(28, 4))
    local sack_item = root:add_le(F.sack, tvb(32, 4))
    if sack ~= 0 then
        local response = op == OP.ACK and bit32.band(flags, 0x0100) ~= 0
        local base_seq = (response and rsp_ack or req_ack) + 2
        local held = {}
        for i = 0, 31 do
            if bit32.band(sack, bit32.lshift(1, i)) ~= 0 then
                local s = (base_seq + i) % 4294967296
                held[#held + 1] = tostring(s)
                sack_item:add(F.sack_seq, s):set_generated()
            end
        end
        sack_item:append_text(" (" .. (response and "responses" or "requests") .. " held: " ..
            table.concat(held, " ") .. ")")
        sack_item:add_proto_expert_info(E.sack)
    end
    local crc_item = root:add_le(F.crc, tvb(36, 4))
    if tvb(36, 4):le_uint() == 0 and from_loopback(pinfo) then
        -- over the loopback interface a sender leaves the CRC out and the receiver takes 0 unchecked (PROTOCOL.md 4)
        crc_item:append_text(" (none: sent over loopback)")
        crc_item:add_proto_expert_info(E.no_crc)
    elseif jdet.prefs.check_crc then
        if captured == reported then
            local computed = crc32c(tvb, captured)
            local good = computed == tvb(36, 4):le_uint()
            crc_item:add(F.crc_good, good):set_generated()
            crc_item:add(F.crc_computed, computed):set_generated()
            if not good then crc_item:add_proto_expert_info(E.bad_crc) end
        else
            crc_item:add_proto_expert_info(E.unchecked)
        end
    end
    if cm then
        local isn_or_zero = tvb(40, 8)
        if op == OP.CM_REQUEST or op == OP.CM_ACCEPT then
            root:add_le(F.cm_req_isn, tvb(40, 4))
            root:add_le(F.cm_rsp_isn, tvb(44, 4))
            root:add_le(F.cm_max_or, tvb(48, 4))
            root:add_le(F.cm_max_ir, tvb(52, 4))
        else
            root:add_le(F.address, isn_or_zero)
            root:add_le(F.operand1, tvb(48, 8))
        end
        if op == OP.CM_DISCONNECT or op == OP.CM_DISCONNECT_REPLY then
            root:add_le(F.cm_peer_qp, tvb(64, 4))
        else
            root:add_le(F.cm_service, tvb(64, 4))
        end
        local len_item = root:add_le(F.length, tvb(68, 4))
        if op == OP.CM_REJECT then
            root:add_le(F.cm_reason, tvb(68, 4))
            len_item:add_proto_expert_info(E.cm_reject, "Connection rejected: " ..
                (reject_reasons[length] or ("reason " .. length)))
        end
    else
        root:add_le(F.address, tvb(40, 8))
        root:add_le(F.operand1, tvb(48, 8))
        root:add_le(F.operand2, tvb(56, 8))
        root:add_le(F.key, tvb(64, 4))
        root:add_le(F.length, tvb(68, 4))
        if op == OP.NAK then
            root:add_le(F.nak_status, tvb(64, 4))
            root:add_le(F.nak_event, tvb(68, 4))
            if key == 0xFFFF then
                root:add_proto_expert_info(E.rnr)
            else
                root:add_proto_expert_info(E.nak, "NAK: " .. (wc_status[key] or key) .. ", " ..
                    (event_codes[length] or length))
            end
        elseif op == OP.DISCONNECT then
            root:add_le(F.disconnect_event, tvb(64, 4))
            root:add_proto_expert_info(E.disconnect, "Disconnect: " .. (event_codes[key] or key))
        end
    end
    root:add_le(F.offset, tvb(72, 4))
    root:add_le(F.immediate, tvb(76, 4))

    local r
    if jdet.prefs.analysis then
        if not pinfo.visited then
            local fresh = analyse(pinfo, op, flags, src_qp, dst_qp, seq, msg_id, key)
            local earlier = results[pinfo.number]
            if earlier then for k, v in pairs(earlier) do fresh[k] = fresh[k] or v end end
            results[pinfo.number] = fresh
        end
        r = results[pinfo.number] or {}
        if r.retransmission_of then
            if r.retransmission_of > 0 then root:add(F.a_retrans_of, r.retransmission_of):set_generated() end
            root:add_proto_expert_info(E.retransmission)
        end
        if r.out_of_order then root:add_proto_expert_info(E.out_of_order) end
        if r.gap then
            root:add(F.a_gap, r.gap):set_generated()
            root:add_proto_expert_info(E.gap)
        end
        if r.request_in then root:add(F.a_request_in, r.request_in):set_generated() end
        if r.response_time then root:add(F.a_response_time, r.response_time):set_generated() end
        if r.response_in then root:add(F.a_response_in, r.response_in):set_generated() end
        if r.nak_of then root:add(F.a_nak_for, r.nak_of):set_generated() end
        if r.cm_request_in then root:add(F.cm_request_in, r.cm_request_in):set_generated() end
        if r.cm_time then root:add(F.cm_setup_time, r.cm_time):set_generated() end
        if r.cm_answer_in then root:add(F.cm_answer_in, r.cm_answer_in):set_generated() end
    else
        r = {}
    end

    local info = string.format("%s qp %#x→%#x", name, src_qp, dst_qp)
    if seq ~= 0 or stream then info = info .. " seq " .. seq end
    info = info .. " ack " .. req_ack .. "/" .. rsp_ack
    if bit32.band(flags, 0x4000) ~= 0 then info = info .. " [LAST]" end
    info = info .. " len " .. plen
    if r.retransmission_of then info = "[Retransmission] " .. info end
    if r.out_of_order then info = "[Out of order] " .. info end
    if op == OP.NAK then info = info .. " " .. (wc_status[key] or tostring(key)) end
    if op == OP.DISCONNECT then info = info .. " " .. (event_codes[key] or tostring(key)) end
    if op == OP.CM_REJECT then info = info .. " " .. (reject_reasons[length] or tostring(length)) end
    pinfo.cols.info = info

    local available = math.min(captured, reported) - HEADER
    if available > 0 then
        local payload = tvb(HEADER, available)
        root:add(cm and F.cm_private or F.payload, payload)
        if cm then
            hand_off(private_table, "jdet.cm.private", key, payload:tvb(), pinfo, tree)
        elseif op == OP.SEND or op == OP.WRITE or op == OP.READ_RESP then
            hand_off(payload_table, "jdet.payload", r.service, payload:tvb(), pinfo, tree)
        end
    end
    return captured
end

function jdet.dissector(tvb, pinfo, tree)
    return dissect(tvb, pinfo, tree)
end

local function heuristic(tvb, pinfo, tree)
    if tvb:reported_len() < HEADER or tvb:len() < 3 then return false end
    if tvb(0, 1):uint() ~= MAGIC0 or tvb(1, 1):uint() ~= MAGIC1 or tvb(2, 1):uint() ~= VERSION then
        return false
    end
    pinfo.conversation = jdet
    dissect(tvb, pinfo, tree)
    return true
end

jdet:register_heuristic("udp", heuristic)
local udp_table = DissectorTable.get("udp.port")
udp_table:add(FABRIC_PORT, jdet)
udp_table:add_for_decode_as(jdet)
local ethertype = DissectorTable.get("ethertype")
if ethertype then ethertype:add(0x88B5, jdet) end -- a raw Ethernet link (local experimental ethertype 1)

local registered_port = FABRIC_PORT
function jdet.prefs_changed()
    if jdet.prefs.udp_port ~= registered_port then
        if registered_port ~= 0 then udp_table:remove(registered_port, jdet) end
        registered_port = jdet.prefs.udp_port
        if registered_port ~= 0 then udp_table:add(registered_port, jdet) end
    end
end
