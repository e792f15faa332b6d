package io.jdet.internal.observe;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

/** JFR: the peer answered a send with a receiver-not-ready NAK; the send will be retried. */
@Name("io.jdet.ReceiverNotReady")
@Label("jdet Receiver Not Ready")
@Category("jdet")
@Description("The peer had no receive posted for a send (RNR NAK); the sender waits and retries")
@StackTrace(false)
final class ReceiverNotReadyEvent extends jdk.jfr.Event {
    @Label("NIC")
    String nic;
    @Label("Queue pair")
    int qp;
    @Label("Refused sequence number")
    long sequence;
}
