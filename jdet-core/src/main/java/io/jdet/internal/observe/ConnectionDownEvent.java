package io.jdet.internal.observe;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

/** JFR: a connected queue pair left CONNECTED, gracefully (DISCONNECT) or failing (ERROR). */
@Name("io.jdet.ConnectionDown")
@Label("jdet Connection Down")
@Category("jdet")
@Description("A connected queue pair was disconnected or failed")
@StackTrace(false)
final class ConnectionDownEvent extends jdk.jfr.Event {
    @Label("NIC")
    String nic;
    @Label("Queue pair")
    int qp;
    @Label("Peer")
    String peer;
    @Label("Peer queue pair")
    int peerQp;
    @Label("Event code")
    String event;
    @Label("Caused by the peer")
    boolean remote;
    @Label("Error")
    @Description("True when the queue pair entered ERROR, false for a graceful disconnect")
    boolean error;
}
