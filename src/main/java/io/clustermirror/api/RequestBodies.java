package io.clustermirror.api;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.clustermirror.mirror.MirrorError;
import io.clustermirror.mirror.MirrorException;
import jakarta.ws.rs.WebApplicationException;
import jakarta.ws.rs.ext.Provider;
import jakarta.ws.rs.ext.ReaderInterceptor;
import jakarta.ws.rs.ext.ReaderInterceptorContext;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;

/**
 * Every JSON request body is read in full before it is mapped: at most {@link HttpGuards#MAX_BODY_BYTES} (a body
 * sent chunked, without a Content-Length, is counted here; 413 past it), and a field set to an explicit
 * {@code null} is refused ({@code {"set":null}} is not the same as leaving {@code set} out, so neither is guessed).
 * Jackson cannot tell the two apart when it builds a record, hence the look at the tree first.
 */
@Provider
public class RequestBodies implements ReaderInterceptor {

    private final ObjectMapper json;

    public RequestBodies(ObjectMapper json) {
        this.json = json;
    }

    @Override
    public Object aroundReadFrom(ReaderInterceptorContext context) throws IOException {
        byte[] body = read(context.getInputStream(), HttpGuards.MAX_BODY_BYTES);
        if (body.length > 0) {
            JsonNode tree = json.readTree(body);
            if (tree != null && tree.isObject()) {
                tree.properties().forEach(field -> {
                    if (field.getValue().isNull()) {
                        throw new MirrorException(
                                MirrorError.INVALID_REQUEST,
                                "Field '" + field.getKey() + "' must not be null; leave it out instead",
                                field.getKey());
                    }
                });
            }
        }
        context.setInputStream(new ByteArrayInputStream(body));
        return context.proceed();
    }

    private static byte[] read(InputStream in, long limit) throws IOException {
        byte[] body = in.readNBytes((int) limit + 1);
        if (body.length > limit) {
            throw new WebApplicationException("The request body is larger than " + limit + " bytes", 413);
        }
        return body;
    }
}
