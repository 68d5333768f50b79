package io.clustermirror.api;

import io.vertx.core.http.HttpServerRequest;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.container.ContainerResponseContext;
import java.util.Set;
import org.jboss.logging.Logger;
import org.jboss.resteasy.reactive.server.ServerResponseFilter;

/**
 * One line per mutating request on its own logger, {@code io.clustermirror.audit}: who, which operation on which
 * mirror and topics, the outcome, and from where. Never a body: mirror configs hold secrets. Requests the HTTP guards
 * refuse before anyone is authenticated (413, 415, 405, ...) are logged as {@code rejected}, with no principal.
 */
public class AuditLog {

    static final Logger AUDIT = Logger.getLogger("io.clustermirror.audit");
    static final Set<String> MUTATING = Set.of("POST", "PUT", "PATCH", "DELETE");

    private final RequestCaller caller;

    public AuditLog(RequestCaller caller) {
        this.caller = caller;
    }

    @ServerResponseFilter
    public void audit(ContainerRequestContext request, ContainerResponseContext response, HttpServerRequest http) {
        if (!MUTATING.contains(request.getMethod()) || caller.operation() == null) {
            return;
        }
        int status = response.getStatus();
        String outcome =
                status == 401 ? "unauthenticated" : status == 403 ? "denied" : status < 400 ? "succeeded" : "failed";
        AUDIT.infof(
                "principal=%s operation=%s mirror=%s topics=%s outcome=%s status=%d client=%s request=\"%s %s\"",
                clean(caller.principal()),
                caller.operation(),
                caller.mirror() == null ? "-" : clean(caller.mirror()),
                caller.topics().isEmpty() ? "-" : clean(String.join(",", caller.topics())),
                outcome,
                status,
                http.remoteAddress() == null ? "-" : http.remoteAddress().hostAddress(),
                request.getMethod(),
                clean(http.path()));
    }

    /**
     * A value as the caller sent it, made safe for one log line: control characters (a decoded %0A in a path or a
     * topic name would forge a line) and quotes are escaped, and it is cut at 256 characters.
     */
    static String clean(String value) {
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < value.length() && out.length() < 256; i++) {
            char c = value.charAt(i);
            if (c < 0x20 || c == 0x7f || c == '"' || c == '\\') {
                out.append(String.format("\\u%04x", (int) c));
            } else {
                out.append(c);
            }
        }
        return value.length() > 256 ? out + "..." : out.toString();
    }

    /** A mutating request the HTTP guards refused before authentication. */
    static void rejected(HttpServerRequest http, int status) {
        if (!MUTATING.contains(http.method().name()) || !http.path().startsWith("/v1/")) {
            return;
        }
        AUDIT.infof(
                "principal=- operation=- mirror=- topics=- outcome=rejected status=%d client=%s request=\"%s %s\"",
                status,
                http.remoteAddress() == null ? "-" : http.remoteAddress().hostAddress(),
                http.method().name(),
                clean(http.path()));
    }
}
