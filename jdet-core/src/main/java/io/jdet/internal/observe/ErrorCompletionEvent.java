package io.jdet.internal.observe;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

/** JFR: a work request completed with a status other than SUCCESS (FLUSHED included). */
@Name("io.jdet.ErrorCompletion")
@Label("jdet Error Completion")
@Category("jdet")
@Description("A work completion with an error status was queued")
@StackTrace(false)
final class ErrorCompletionEvent extends jdk.jfr.Event {
    @Label("NIC")
    String nic;
    @Label("Queue pair")
    int qp;
    @Label("Work request id")
    long wrId;
    @Label("Status")
    String status;
    @Label("Type")
    String type;
}
