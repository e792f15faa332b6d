package io.jdet.internal.observe;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;
import jdk.jfr.Timespan;

/** JFR: a stream's retransmission timer expired and it went back to its first unacknowledged frame. */
@Name("io.jdet.RetransmitTimeout")
@Label("jdet Retransmission Timeout")
@Category("jdet")
@Description("No acknowledgement progress for an RTO: the stream resends from its first unacknowledged frame")
@StackTrace(false)
final class RetransmitTimeoutEvent extends jdk.jfr.Event {
    @Label("NIC")
    String nic;
    @Label("Queue pair")
    int qp;
    @Label("Stream")
    @Description("request or response")
    String stream;
    @Label("First resent sequence number")
    long sequence;
    @Label("Timeout that expired")
    @Timespan(Timespan.NANOSECONDS)
    long rto;
}
