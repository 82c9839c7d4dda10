# signupd auf Deutsch: jedes Wort, das Besucher auf den Seiten und in den beiden Mails lesen.
# Die Nachrichten-IDs und die Variablen ($list, $site, ...) bleiben wie in en.ftl.
#
# Anrede: „Sie“.
# Glossar:
#   sign up / signup       - anmelden / Anmeldung
#   confirm                - bestätigen
#   list                   - Liste
#   remove (my address)    - (meine Adresse) entfernen; nicht „abbestellen“
#   preferences            - Einstellungen / Einstellungsseite
#   email address          - E-Mail-Adresse
#   link                   - Link

## Mail dates

# A date and time in a mail. $day and $year are numbers, $month is one of the month names below, $time is "14:05".
date-format = { $day }. { $month } { $year }, { $time } UTC
date-month-1 = Januar
date-month-2 = Februar
date-month-3 = März
date-month-4 = April
date-month-5 = Mai
date-month-6 = Juni
date-month-7 = Juli
date-month-8 = August
date-month-9 = September
date-month-10 = Oktober
date-month-11 = November
date-month-12 = Dezember

## Durations: "10 minutes", "1 day". CLDR plural categories on $n.

duration-second =
    { $n ->
        [one] { $n } Sekunde
       *[other] { $n } Sekunden
    }
duration-minute =
    { $n ->
        [one] { $n } Minute
       *[other] { $n } Minuten
    }
duration-hour =
    { $n ->
        [one] { $n } Stunde
       *[other] { $n } Stunden
    }
duration-day =
    { $n ->
        [one] { $n } Tag
       *[other] { $n } Tage
    }
# Joins the last two items of a list: "3 per 10 minutes and 10 per 1 day".
duration-and = { $init } und { $last }
duration-separator = {", "}
# A rate limit: "3 per 10 minutes". $duration is one of the duration messages above.
duration-per = { $n } pro { $duration }

## page

# $site is the operator's site name.
page-back-to = Zurück zu { $site }
page-privacy = Was gespeichert wird und wie lange
# Before the links to this form in the list's other languages.
page-languages = In anderen Sprachen:

## errors

errors-unavailable-title = Bitte versuchen Sie es noch einmal
errors-unavailable = Das hat gerade nicht geklappt. Bitte versuchen Sie es in einer Minute noch einmal.
errors-not-found-title = Nicht gefunden
errors-not-found = Hier gibt es kein Anmeldeformular.
errors-not-found-link = Zum Anmeldeformular
errors-incomplete-title = Dieser Link ist unvollständig
errors-incomplete = Der Link scheint abgeschnitten oder verändert zu sein. Öffnen Sie ihn noch einmal aus der Mail, oder kopieren Sie die ganze Adresse in Ihren Browser.
errors-refused-title = Das hat nicht geklappt
errors-refused = Die Anfrage konnte nicht gelesen werden. Bitte gehen Sie zur Seite zurück und versuchen Sie es noch einmal.
errors-timeout = Die Anfrage ist nicht rechtzeitig angekommen. Bitte versuchen Sie es noch einmal.
errors-internal = Bei uns ist etwas schiefgegangen. Bitte versuchen Sie es in einer Minute noch einmal.

## signup

signup-title = Anmelden: { $list }
signup-heading = Anmeldung für { $list }
signup-intro = Geben Sie Ihre E-Mail-Adresse ein. Wir schicken Ihnen einen Link; angemeldet sind Sie erst, wenn Sie ihn öffnen und bestätigen.
signup-email-label = E-Mail-Adresse
signup-honeypot-label = Dieses Feld bitte leer lassen
signup-submit = Anmelden
signup-choose-title = Anmelden
signup-choose = Wählen Sie eine Liste:
signup-several-title = Anmelden
signup-several-heading = Anmelden
signup-lists-legend = Welche Listen möchten Sie erhalten?
signup-several-consent = Schicken Sie mir die angekreuzten Listen per E-Mail. Ich kann mich von jeder jederzeit abmelden.
signup-no-list-ticked = Bitte kreuzen Sie mindestens eine Liste an.
# After a form field's label, when the field may be left empty.
signup-optional = freiwillig
# A select field's first, empty option.
signup-choose-option = Bitte wählen
# A required form field left empty: $field is its label.
signup-field-missing = Bitte füllen Sie „{ $field }“ aus.
# A form field whose value its rule refuses: $field is its label.
signup-field-invalid = Bitte prüfen Sie „{ $field }“: Wählen Sie eine der Möglichkeiten, oder fassen Sie sich kürzer und in einer Zeile.
signup-unreadable = Das Formular konnte nicht gelesen werden. Bitte versuchen Sie es noch einmal.
signup-unsupported = Das Formular wurde in einem Format gesendet, das dieser Dienst nicht versteht.
signup-too-large = Das Formular war zu groß. Bitte geben Sie nur Ihre E-Mail-Adresse ein.
signup-origin-not-allowed = Dieses Formular kann von der Seite, von der es gesendet wurde, nicht verwendet werden.
signup-invalid-email = Bitte geben Sie eine gültige E-Mail-Adresse ein, etwa name@example.com.
signup-consent-required = Bitte setzen Sie das Häkchen, um diese E-Mails zu erhalten.
signup-unknown-list = Dieses Formular verweist auf eine Liste, die es nicht gibt.
signup-invalid-source = Dieses Formular sendet eine Quelle, die dieser Dienst nicht annimmt. Bitte sagen Sie es den Betreibern der Seite.
signup-unknown-tag = Dieses Formular sendet ein Schlagwort, das die Liste nicht kennt. Bitte sagen Sie es den Betreibern der Seite.
signup-domain-not-allowed = Adressen dieser Domain können hier nicht für eine Anmeldung verwendet werden. Bitte verwenden Sie eine andere E-Mail-Adresse.
signup-rate-limited = Zu viele Anmeldungen aus Ihrem Netz. Bitte versuchen Sie es später noch einmal.
signup-storage-unavailable = Ihre Anmeldung konnte gerade nicht gespeichert werden. Bitte versuchen Sie es in einer Minute noch einmal.

## check inbox

check-inbox-title = Sehen Sie in Ihr Postfach
check-inbox-sent = Wenn die Adresse Mail empfangen kann, ist eine Nachricht unterwegs. Öffnen Sie den Link darin und bestätigen Sie mit dem Knopf.
check-inbox-sent-for = Wenn die Adresse Mail empfangen kann, ist eine Nachricht zu { $list } unterwegs. Öffnen Sie den Link darin und bestätigen Sie mit dem Knopf.
check-inbox-nothing-arrived = Nach ein paar Minuten ist nichts angekommen? Sehen Sie im Spam-Ordner nach. Der Link gilt nur eine Zeit lang; Sie können sich einfach noch einmal anmelden.
# The "open your inbox" link: $provider is its name ("Open Gmail").
check-inbox-open-inbox = { $provider } öffnen

## surge

surge-title = Noch ein Schritt
surge-unusual = Diese Seite hat gerade ungewöhnlich viel Verkehr. Bestätigungsmails gehen deshalb nur an Menschen, die darum bitten.
surge-ask = Drücken Sie den Knopf, und Ihre Bestätigungsmail ist unterwegs.
surge-button = Bestätigungsmail senden
surge-not-you = Sie haben sich nicht angemeldet? Schließen Sie diese Seite, dann wird nichts verschickt.

## confirm

confirm-title = Anmeldung bestätigen: { $list }
confirm-heading = Anmeldung bestätigen
confirm-intro = Sie möchten { $list } per E-Mail erhalten. Bestätigen Sie mit dem Knopf; bis dahin wird nichts verschickt.
confirm-email-label = Ihre E-Mail-Adresse
confirm-email-hint = Geben Sie die Adresse ein, an die diese Mail ging. So können automatische Link-Prüfer nicht für Sie bestätigen.
confirm-button = Anmeldung bestätigen
confirm-not-you = Sie haben das nicht angefordert? Schließen Sie einfach diese Seite; ohne Bestätigung bekommen Sie nichts mehr.
confirm-wrong-address = An diese Adresse wurde der Link nicht geschickt. Bitte geben Sie sie noch einmal ein.
confirm-already-title = Bereits bestätigt
confirm-already = Diese Adresse ist bereits für { $list } angemeldet. Sie müssen nichts weiter tun.
confirm-done-title = Sie sind angemeldet
confirm-done = Vielen Dank. Ihre Adresse ist jetzt für { $list } angemeldet.
confirm-done-any = Vielen Dank. Ihre Adresse ist jetzt angemeldet.
confirm-expired-title = Dieser Link ist abgelaufen
confirm-expired = Der Bestätigungslink gilt nicht mehr: Er ist abgelaufen, wurde durch eine neuere Mail ersetzt oder schon benutzt. Sie können sich noch einmal anmelden.
confirm-sign-up-again = Noch einmal anmelden

## manage

manage-title = Meine Adresse entfernen
manage-intro = Damit wird Ihre Adresse aus { $list } entfernt. Sie bekommen von dort keine Mail mehr.
manage-intro-any = Damit wird Ihre Adresse aus der Liste entfernt, für die dieser Link verschickt wurde. Sie bekommen von dort keine Mail mehr.
manage-button = Meine Adresse entfernen
manage-removed-title = Adresse entfernt
manage-removed = Ihre Adresse wurde aus { $list } entfernt. Sie bekommen von dort keine Mail mehr.
manage-removed-any = Ihre Adresse wurde entfernt. Sie bekommen von dieser Liste keine Mail mehr.

## preferences

preferences-title = Ihre E-Mail-Einstellungen
preferences-intro = Kreuzen Sie die Listen von { $site } an, die Sie bekommen möchten, entfernen Sie das Häkchen bei denen, die Sie nicht mehr möchten, und speichern Sie.
preferences-legend = Listen
preferences-pending = Ausstehend: wartet auf Ihre Bestätigung.
# Before the form fields a list's row keeps, shown read-only.
preferences-kept = Ihre Angaben bei der Anmeldung:
preferences-save = Speichern
preferences-remove-all-heading = Meine Adresse entfernen
preferences-remove-all-intro = Oder entfernen Sie Ihre Adresse auf einmal aus allen diesen Listen. Sie bekommen von dort keine Mail mehr.
preferences-remove-all = Aus allen Listen entfernen
preferences-saved-title = Einstellungen gespeichert
preferences-saved = Ihre Auswahl für { $site } wurde gespeichert. Sie bekommen nur noch Mail von den Listen, die Sie angekreuzt haben.
preferences-saved-any = Ihre Auswahl wurde gespeichert. Sie bekommen nur noch Mail von den Listen, die Sie angekreuzt haben.
preferences-unreadable-title = Das Formular konnte nicht gelesen werden
preferences-unreadable = Es wurde nichts geändert. Bitte öffnen Sie den Link aus der Mail noch einmal und speichern Sie erneut.

## privacy

privacy-title = Datenschutz: { $list }
privacy-heading = Was mit Ihrer Adresse geschieht
privacy-intro = Diese Seite beschreibt, was gespeichert wird, wenn Sie sich für { $list } anmelden, und wie lange.
privacy-stored-heading = Was gespeichert wird
privacy-stored = Ihre E-Mail-Adresse, die Liste, die Version des Einwilligungstextes, dem Sie zugestimmt haben ({ $version }), und dieser Text selbst, wann Sie sich angemeldet haben und wann und wie Sie bestätigt haben (auch wie lange nach der Mail). Wenn das Formular sie nennt, auch der Ort, an dem Sie sich angemeldet haben (etwa „homepage-footer“), und die Themen, die es angibt.
# The list's form fields: $fields are their labels, already joined ("name and company").
privacy-fields = Das Formular fragt außerdem nach: { $fields }. Was Sie dort eingeben, wird mit Ihrer Anmeldung gespeichert, so lange wie der Rest, und auf Ihrer Einstellungsseite angezeigt.
# $limits is a list of rates, already joined ("3 per 10 minutes and 10 per 1 day").
privacy-no-ip = Ihre IP-Adresse wird nicht gespeichert. Um Missbrauch zu begrenzen, zählt signupd Anmeldungen je Netz unter einem Einweg-Hash des Netzes, nie unter der Adresse selbst: { $limits }. Ein Zähler umfasst höchstens { $duration } und wird bei der nächsten Bereinigung danach gelöscht.
privacy-mail-heading = Die Mails
privacy-mail = Sie bekommen eine Mail mit einem Bestätigungslink und höchstens alle { $duration } eine neue, wenn Sie sich noch einmal anmelden. Bis Sie bestätigen, wird nichts anderes verschickt.
privacy-unconfirmed = Wenn Sie nicht bestätigen, wird der Link { $duration } nach der letzten Mail ungültig, und Ihre Adresse wird bei der nächsten Bereinigung danach gelöscht.
privacy-neighbourhood = Alle Netze einer Nachbarschaft (ein Adressblock eines Anbieters) werden außerdem zusammen gezählt: { $limits }.
privacy-never-mailed = Konnte die Bestätigungsmail noch nicht verschickt werden (wenn sich viele zugleich anmelden), wird Ihre Adresse { $duration } nach der Anmeldung gelöscht, ob angeschrieben oder nicht.
privacy-cap = Damit niemand Ihr Postfach füllen kann, indem er Ihre Adresse in viele Formulare einträgt, gehen an eine Adresse innerhalb von 24 Stunden höchstens { $n } Bestätigungsmails, über alle Listen dieses Dienstes. Dafür wird ein Einweg-Hash Ihrer Adresse mit der Zeit jeder solchen Mail einen Tag lang aufbewahrt.
privacy-reputation = Wenn Sie bestätigen, wird ein Einweg-Hash Ihres Netzes (ein Adressblock eines Anbieters) mit dem Tag { $duration } lang aufbewahrt: Mail an Netze, aus denen Menschen bestätigen, geht zuerst, wenn viele sich gleichzeitig anmelden. Sonst wird dazu nichts aufbewahrt.
privacy-removal-heading = Ihre Adresse entfernen
privacy-removal = Jede Mail enthält einen Link, mit dem Sie Ihre Adresse entfernen können. Dann wird Ihre Adresse gelöscht. Nur ein Einweg-Hash davon bleibt, damit sie nie wieder ohne neue Bestätigung angeschrieben wird – oder nie mehr, wenn Sie angegeben haben, dass die Anmeldung nicht von Ihnen kam.
privacy-shared = Wenn Sie bestätigen oder Ihre Adresse entfernen, werden die eigenen Systeme des Betreibers benachrichtigt, mit Ihrer Adresse und dem, dem Sie zugestimmt haben.
# $address is the operator's contact email address.
privacy-contact = Fragen? Schreiben Sie an { $address }.

## mail

mail-greeting = Hallo,
mail-asked = jemand – hoffentlich Sie – möchte { $list } an diese Adresse erhalten.
# $button is the text of the button on the confirmation page (confirm-button).
mail-how = Zum Bestätigen öffnen Sie diesen Link und drücken den Knopf „{ $button }“:
mail-confirm-link = Meine Anmeldung bestätigen
mail-copy = Oder kopieren Sie diese Adresse in Ihren Browser:
# $date is written with date-format.
mail-until = Der Link gilt bis { $date }. Bis Sie bestätigen, wird nichts anderes verschickt.
mail-not-you = Sie haben das nicht angefordert? Dann können Sie diese Mail ignorieren oder diese Adresse endgültig entfernen:
mail-remove-for-good = Diese Adresse entfernen
mail-welcome = Ihre Adresse ist jetzt für { $list } angemeldet. Vielen Dank für Ihre Bestätigung.
# The welcome mail's link opens the preference page (where one may also leave): the words say so, not "remove".
mail-preferences-any-time = Auf Ihrer Einstellungsseite können Sie jederzeit wählen, was Sie von uns bekommen, oder sich abmelden:
mail-preferences-link = Meine Einstellungsseite öffnen
mail-automated = Dies ist eine automatisch erzeugte Nachricht.
mail-privacy = Was gespeichert wird und wie lange:
mail-confirm-subject = Bitte bestätigen Sie Ihre Anmeldung
mail-welcome-subject = Sie sind angemeldet

## language

# This language's own name, written in it ("Deutsch", "Français", "日本語"): the link to the form in
# this language on a list's form that offers several.
language-name = Deutsch
