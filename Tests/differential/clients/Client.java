// Java's java.net.http.HttpClient in the capture (issue #24 condition 4): what a Java program sends to the recorder
// at $BASE. Run by capture.sh with Debian's openjdk-17 as a single-file program (`java Client.java MODE`).
//
// MODE `default` is HttpClient.newHttpClient(): HTTP/2 preferred, so over cleartext its first request offers
// `Upgrade: h2c`; MODE `http1` pins HTTP/1.1, as many applications do.
import java.io.ByteArrayInputStream;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpRequest.BodyPublishers;
import java.net.http.HttpResponse.BodyHandlers;
import java.nio.charset.StandardCharsets;

public class Client {
    public static void main(String[] arguments) throws Exception {
        String base = System.getenv("BASE");
        HttpClient client = arguments[0].equals("http1")
            ? HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build()
            : HttpClient.newHttpClient();
        String query = URLEncoder.encode("café & co", StandardCharsets.UTF_8);
        send(client, HttpRequest.newBuilder(URI.create(base + "/items?q=" + query + "&page=2")).GET().build());
        send(client, HttpRequest.newBuilder(URI.create(base + "/items/7"))
            .method("HEAD", BodyPublishers.noBody()).build());
        send(client, HttpRequest.newBuilder(URI.create(base + "/items"))
            .header("Content-Type", "application/json")
            .POST(BodyPublishers.ofString("{\"name\":\"Zoë\",\"count\":2}")).build());
        send(client, HttpRequest.newBuilder(URI.create(base + "/login"))
            .header("Content-Type", "application/x-www-form-urlencoded")
            .POST(BodyPublishers.ofString("user=zo%C3%AB&password=p%40ss+word")).build());
        // A body of unknown length: HttpClient sends it chunked.
        byte[] lines = "{\"part\": 1}\n{\"part\": 2}\n".getBytes(StandardCharsets.UTF_8);
        send(client, HttpRequest.newBuilder(URI.create(base + "/stream"))
            .header("Content-Type", "application/x-ndjson")
            .POST(BodyPublishers.ofInputStream(() -> new ByteArrayInputStream(lines))).build());
    }

    static void send(HttpClient client, HttpRequest request) throws Exception {
        client.send(request, BodyHandlers.ofByteArray());
    }
}
