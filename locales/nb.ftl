# signupd på norsk bokmål: hvert ord en besøkende leser på sidene og i de to e-postene.
# Meldings-ID-ene og variablene ($list, $site, ...) er de samme som i en.ftl.
#
# Tiltale: «du», som norske nettsteder; korte setninger.
# Ordliste:
#   sign up / signup        - melde seg på / påmelding
#   confirm                 - bekrefte / bekreftelse
#   list                    - liste
#   remove (my address)     - fjerne (adressen min); opplysningene «slettes»
#   preferences             - innstillinger / innstillingsside
#   email address           - e-postadresse (kort: adresse)
#   link                    - lenke
#   subscription            - påmelding
#   unsubscribe             - melde seg av
#   mail                    - e-post (en e-post)
#   one-way hash            - enveis hash

## Mail dates

date-format = { $day }. { $month } { $year } kl. { $time } UTC
date-month-1 = januar
date-month-2 = februar
date-month-3 = mars
date-month-4 = april
date-month-5 = mai
date-month-6 = juni
date-month-7 = juli
date-month-8 = august
date-month-9 = september
date-month-10 = oktober
date-month-11 = november
date-month-12 = desember

## Durations

duration-second =
    { $n ->
        [one] { $n } sekund
       *[other] { $n } sekunder
    }
duration-minute =
    { $n ->
        [one] { $n } minutt
       *[other] { $n } minutter
    }
duration-hour =
    { $n ->
        [one] { $n } time
       *[other] { $n } timer
    }
duration-day =
    { $n ->
        [one] { $n } dag
       *[other] { $n } dager
    }
duration-and = { $init } og { $last }
duration-separator = {", "}
duration-per = { $n } per { $duration }

## page

page-back-to = Tilbake til { $site }
page-privacy = Hva vi lagrer, og hvor lenge
page-languages = På andre språk:

## errors

errors-unavailable-title = Prøv igjen
errors-unavailable = Det gikk ikke akkurat nå. Prøv igjen om et minutt.
errors-not-found-title = Ikke funnet
errors-not-found = Det finnes ikke noe påmeldingsskjema her.
errors-not-found-link = Gå til påmeldingsskjemaet
errors-incomplete-title = Lenken er ufullstendig
errors-incomplete = Lenken ser ut til å være kuttet av eller endret. Åpne den på nytt fra e-posten, eller kopier hele adressen inn i nettleseren.
errors-refused-title = Det gikk ikke
errors-refused = Forespørselen kunne ikke leses. Gå tilbake til siden og prøv igjen.
errors-timeout = Forespørselen kom ikke fram i tide. Prøv igjen.
errors-internal = Noe gikk galt hos oss. Prøv igjen om et minutt.

## signup

signup-title = Påmelding: { $list }
signup-heading = Meld deg på { $list }
signup-intro = Skriv inn e-postadressen din. Vi sender deg en lenke; du er ikke påmeldt før du har åpnet den og bekreftet.
signup-email-label = E-postadresse
signup-honeypot-label = La dette feltet stå tomt
signup-submit = Meld meg på
signup-choose-title = Påmelding
signup-choose = Velg en liste:
signup-several-title = Påmelding
signup-several-heading = Påmelding
signup-lists-legend = Hvilke lister vil du ha?
signup-several-consent = Send meg listene jeg har krysset av for, på e-post. Jeg kan når som helst melde meg av hver av dem.
signup-no-list-ticked = Kryss av for minst én liste.
signup-optional = valgfritt
signup-choose-option = Velg
signup-field-missing = Fyll ut «{ $field }».
signup-field-invalid = Sjekk «{ $field }»: velg ett av alternativene, eller skriv kortere og på én linje.
signup-unreadable = Skjemaet kunne ikke leses. Prøv igjen.
signup-unsupported = Skjemaet ble sendt i et format denne tjenesten ikke forstår.
signup-too-large = Skjemaet var for stort. Skriv bare inn e-postadressen din.
signup-origin-not-allowed = Skjemaet kan ikke brukes fra nettstedet det ble sendt fra.
signup-invalid-email = Skriv inn en gyldig e-postadresse, for eksempel navn@example.com.
signup-consent-required = Kryss av i boksen for å godta å motta disse e-postene.
signup-unknown-list = Skjemaet viser til en liste som ikke finnes.
signup-invalid-source = Skjemaet sender en kilde denne tjenesten ikke godtar. Gi gjerne beskjed til eieren av nettstedet.
signup-unknown-tag = Skjemaet sender en merkelapp listen ikke kjenner. Gi gjerne beskjed til eieren av nettstedet.
signup-domain-not-allowed = Adresser på dette domenet kan ikke brukes til påmelding her. Bruk en annen e-postadresse.
signup-rate-limited = For mange påmeldinger fra nettverket ditt. Prøv igjen senere.
signup-storage-unavailable = Påmeldingen din kunne ikke lagres akkurat nå. Prøv igjen om et minutt.

## check inbox

check-inbox-title = Sjekk innboksen din
check-inbox-sent = Hvis adressen kan motta e-post, er en melding på vei. Åpne lenken i den, og trykk på knappen for å bekrefte.
check-inbox-sent-for = Hvis adressen kan motta e-post, er en melding om { $list } på vei. Åpne lenken i den, og trykk på knappen for å bekrefte.
check-inbox-nothing-arrived = Har ingenting kommet etter noen minutter? Se i søppelpostmappen. Lenken virker bare en begrenset tid; du kan ganske enkelt melde deg på igjen.
check-inbox-open-inbox = Åpne { $provider }

## surge

surge-title = Ett steg til
surge-unusual = Nettstedet har uvanlig mye trafikk akkurat nå, så det sender bare bekreftelses-e-post til dem som ber om det.
surge-ask = Trykk på knappen, så er bekreftelses-e-posten din på vei.
surge-button = Send meg bekreftelses-e-posten
surge-not-you = Har du ikke meldt deg på? Lukk siden, så sendes ingenting.

## confirm

confirm-title = Bekreft påmeldingen: { $list }
confirm-heading = Bekreft påmeldingen
confirm-intro = Du har bedt om å få { $list } på e-post. Trykk på knappen for å bekrefte; ingenting sendes før du gjør det.
confirm-email-label = E-postadressen din
confirm-email-hint = Skriv inn adressen denne e-posten ble sendt til. Da kan ikke programmer som sjekker lenker automatisk, bekrefte på dine vegne.
confirm-button = Bekreft påmeldingen
confirm-not-you = Har du ikke bedt om dette? Bare lukk siden; uten bekreftelse får du ikke noe mer.
confirm-wrong-address = Det er ikke adressen lenken ble sendt til. Skriv den inn på nytt.
confirm-already-title = Allerede bekreftet
confirm-already = Denne adressen er allerede påmeldt { $list }. Du trenger ikke gjøre noe mer.
confirm-done-title = Du er påmeldt
confirm-done = Takk! Adressen din er nå påmeldt { $list }.
confirm-done-any = Takk! Adressen din er nå påmeldt.
confirm-expired-title = Lenken er utløpt
confirm-expired = Bekreftelseslenken er ikke lenger gyldig: den er utløpt, erstattet av en nyere e-post eller allerede brukt. Du kan melde deg på igjen.
confirm-sign-up-again = Meld deg på igjen

## manage

manage-title = Fjern adressen min
manage-intro = Dette fjerner adressen din fra { $list }. Du får ikke mer e-post derfra.
manage-intro-any = Dette fjerner adressen din fra listen som denne lenken ble sendt for. Du får ikke mer e-post derfra.
manage-button = Fjern adressen min
manage-removed-title = Adressen er fjernet
manage-removed = Adressen din er fjernet fra { $list }. Du får ikke mer e-post derfra.
manage-removed-any = Adressen din er fjernet. Du får ikke mer e-post fra denne listen.

## preferences

preferences-title = E-postinnstillingene dine
preferences-intro = Kryss av for listene fra { $site } du vil ha, fjern krysset for dem du ikke lenger vil ha, og lagre.
preferences-legend = Lister
preferences-pending = Venter på bekreftelsen din.
preferences-kept = Dette oppga du da du meldte deg på:
preferences-save = Lagre
preferences-remove-all-heading = Fjern adressen min
preferences-remove-all-intro = Eller fjern adressen din fra alle disse listene på én gang. Da får du ikke mer e-post fra dem.
preferences-remove-all = Fjern meg fra alle
preferences-saved-title = Innstillingene er lagret
preferences-saved = Valgene dine for { $site } er lagret. Du får bare e-post fra listene du har krysset av for.
preferences-saved-any = Valgene dine er lagret. Du får bare e-post fra listene du har krysset av for.
preferences-unreadable-title = Skjemaet kunne ikke leses
preferences-unreadable = Ingenting er endret. Åpne lenken fra e-posten på nytt, og lagre en gang til.

## privacy

privacy-title = Personvern: { $list }
privacy-heading = Hva som skjer med adressen din
privacy-intro = Denne siden beskriver hva som lagres når du melder deg på { $list }, og hvor lenge.
privacy-stored-heading = Hva som lagres
privacy-stored = E-postadressen din, listen, versjonen av samtykketeksten du godtok ({ $version }) og selve teksten, når du meldte deg på, og når og hvordan du bekreftet (også hvor lenge etter e-posten). Hvis skjemaet oppgir dem, også hvor du meldte deg på fra (for eksempel «homepage-footer»), og emnene det nevner.
privacy-fields = Skjemaet spør også om { $fields }. Det du skriver der, lagres sammen med påmeldingen din like lenge som resten, og vises på innstillingssiden din.
privacy-no-ip = IP-adressen din lagres ikke. For å begrense misbruk teller signupd påmeldinger per nettverk under en enveis hash av nettverket, aldri under selve adressen: { $limits }. En teller dekker høyst { $duration } og slettes ved neste opprydding etter det.
privacy-mail-heading = E-postene
privacy-mail = Du får én e-post med en bekreftelseslenke, og hvis du melder deg på igjen, høyst én ny per { $duration }. Ingenting annet sendes før du har bekreftet.
privacy-unconfirmed = Hvis du ikke bekrefter, slutter lenken å virke { $duration } etter den siste e-posten, og adressen din slettes ved neste opprydding etter det.
privacy-neighbourhood = Alle nettverk i samme nabolag (en adresseblokk hos én leverandør) telles dessuten sammen: { $limits }.
privacy-never-mailed = Hvis bekreftelses-e-posten ennå ikke har kunnet sendes (når mange melder seg på samtidig), slettes adressen din { $duration } etter at du meldte deg på, enten e-posten er sendt eller ikke.
privacy-cap =
    For at ingen skal kunne oversvømme innboksen din ved å skrive inn adressen din i mange skjemaer, går det høyst { $n ->
        [one] { $n } bekreftelses-e-post
       *[other] { $n } bekreftelses-e-poster
    } til samme adresse i løpet av 24 timer, på tvers av alle listene i denne tjenesten. Derfor lagres en enveis hash av adressen din sammen med tidspunktet for hver slik e-post, i ett døgn.
privacy-reputation = Når du bekrefter, lagres en enveis hash av nettverket ditt (en adresseblokk hos én leverandør) sammen med datoen i { $duration }: når mange melder seg på samtidig, sendes e-post til nettverk der folk bekrefter, først. Ingenting annet om bekreftelsen lagres sammen med den.
privacy-removal-heading = Fjerne adressen din
privacy-removal = Hver e-post har en lenke for å fjerne adressen din. Når du bruker den, slettes adressen din. Bare en enveis hash av den beholdes, slik at den aldri får e-post igjen uten en ny bekreftelse – eller aldri mer, hvis du har oppgitt at påmeldingen ikke var din.
privacy-shared = Når du bekrefter eller fjerner adressen din, får operatørens egne systemer beskjed, med adressen din og hva du har godtatt.
privacy-contact = Spørsmål? Skriv til { $address }.

## mail

mail-greeting = Hei,
mail-asked = Noen – forhåpentligvis du – har bedt om å få { $list } til denne adressen.
mail-how = Bekreft ved å åpne denne lenken og trykke på knappen «{ $button }»:
mail-confirm-link = Bekreft påmeldingen min
mail-copy = Eller kopier denne adressen inn i nettleseren:
mail-until = Lenken virker til { $date }. Inntil du bekrefter, sendes ingenting annet.
mail-not-you = Har du ikke bedt om dette? Da kan du se bort fra denne e-posten, eller fjerne adressen for godt:
mail-remove-for-good = Fjern denne adressen
mail-welcome = Adressen din er nå påmeldt { $list }. Takk for at du bekreftet.
mail-preferences-any-time = På innstillingssiden din kan du når som helst velge hva du får fra oss, eller melde deg av:
mail-preferences-link = Åpne innstillingssiden min
mail-automated = Dette er en automatisk melding.
mail-privacy = Hva vi lagrer, og hvor lenge:
mail-confirm-subject = Bekreft påmeldingen din
mail-welcome-subject = Du er påmeldt

## language

language-name = Norsk bokmål
