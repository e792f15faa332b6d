package io.jdet.internal.observe;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

/** JFR: a queue pair became CONNECTED (by the connection manager or by a manual modify). */
@Name("io.jdet.ConnectionUp")
@Label("jdet Connection Up")
@Category("jdet")
@Description("A queue pair became connected to a peer queue pair")
@StackTrace(false)
final class ConnectionUpEvent extends jdk.jfr.Event {
    @Label("NIC")
    String nic;
    @Label("Queue pair")
    int qp;
    @Label("Peer")
    String peer;
    @Label("Peer queue pair")
    int peerQp;
}
